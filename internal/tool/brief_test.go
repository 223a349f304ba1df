package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tool/grep"
)

// TestBrief checks the built-in read tools described briefly: a fraction of the full spec's
// bytes, no description left in the schema, the same validation and the same behaviour.
func TestBrief(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tool.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, full := range []tool.Tool{fstool.Read(ws), grep.New(ws, grep.Options{}), fstool.Find(ws), fstool.Ls(ws)} {
		fs, b := full.Spec(), tool.Brief(full).Spec()
		if b.Name != fs.Name || b.Description != fs.Brief || b.Brief == "" || b.Replay != fs.Replay {
			t.Errorf("%s: brief spec %+v", fs.Name, b)
		}
		if strings.Contains(string(b.Schema), `"description"`) {
			t.Errorf("%s: brief schema keeps descriptions: %s", fs.Name, b.Schema)
		}
		if n, m := len(b.Description)+len(b.Schema), len(fs.Description)+len(fs.Schema); n*2 > m {
			t.Errorf("%s: brief spec is %d bytes, full %d: not even halved", fs.Name, n, m)
		}
		for _, bad := range []string{`{"nope":1}`, `{"limit":0}`, `{"path":1}`} {
			_, errFull := tool.Validate(fs, bad)
			_, errBrief := tool.Validate(b, bad)
			var ve *tool.ValidationError
			if !errors.As(errFull, &ve) || !errors.As(errBrief, &ve) {
				t.Errorf("%s %s: full refuses (%v), brief refuses (%v)", fs.Name, bad, errFull, errBrief)
			}
		}
	}
	res, err := tool.Brief(fstool.Read(ws)).Run(context.Background(), tool.Call{ID: "c", Args: json.RawMessage(`{"path":"a.txt","offset":2}`)})
	if err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "two") || strings.Contains(res.Content[0].Text, "one") {
		t.Fatalf("brief read: %+v, %v", res, err)
	}
}

// TestBriefKeepsPropertyNamedDescription: only descriptions go, not a property of that name.
func TestBriefKeepsPropertyNamedDescription(t *testing.T) {
	s := tool.Spec{Name: "x", Brief: "x briefly", Schema: json.RawMessage(
		`{"type":"object","description":"d","properties":{"description":{"type":"string","description":"d2","maxLength":9}},"required":["description"],"additionalProperties":false}`)}
	b := tool.Brief(fake{s}).Spec()
	if got := string(b.Schema); !strings.Contains(got, `"properties":{"description":{"type":"string","maxLength":9}}`) || strings.Contains(got, `"d"`) || strings.Contains(got, "d2") {
		t.Fatalf("schema %s", got)
	}
	if _, err := tool.Validate(b, `{"description":"0123456789"}`); err == nil {
		t.Fatal("maxLength lost")
	}
	if got := tool.Brief(fake{tool.Spec{Name: "y", Description: "full"}}).Spec(); got.Description != "full" {
		t.Fatalf("a tool without a Brief changed: %+v", got)
	}
}

type fake struct{ spec tool.Spec }

func (f fake) Spec() tool.Spec                                     { return f.spec }
func (f fake) Run(context.Context, tool.Call) (tool.Result, error) { return tool.TextResult("ok"), nil }
