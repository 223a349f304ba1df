package fstool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// newWS returns a workspace on a fresh temporary directory.
func newWS(t testing.TB) *tool.Workspace {
	t.Helper()
	ws, err := tool.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// writeFile creates a file (and its parents) under the workspace directory.
func writeFile(t testing.TB, ws *tool.Workspace, rel, content string) {
	t.Helper()
	p := filepath.Join(ws.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, ws *tool.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call validates args like the kernel does and runs the tool.
func call(t testing.TB, tl tool.Tool, args any) (tool.Result, error) {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	valid, err := tool.ValidateCall(tl, raw)
	if err != nil {
		t.Fatalf("%s: arguments %s refused: %v", tl.Spec().Name, raw, err)
	}
	return tl.Run(context.Background(), tool.Call{ID: "c1", Args: valid})
}

// mustText runs a call that must succeed and returns its text.
func mustText(t testing.TB, tl tool.Tool, args any) string {
	t.Helper()
	res, err := call(t, tl, args)
	if err != nil {
		t.Fatalf("%s %v: %v", tl.Spec().Name, args, err)
	}
	return text(res)
}

func text(res tool.Result) string {
	if len(res.Content) == 0 || res.Content[0].Type != llm.PartText {
		return ""
	}
	return res.Content[0].Text
}

// errText runs a call that must fail and returns the error message.
func errText(t testing.TB, tl tool.Tool, args any) string {
	t.Helper()
	res, err := call(t, tl, args)
	if err == nil {
		t.Fatalf("%s %v: no error; result %q", tl.Spec().Name, args, text(res))
	}
	return err.Error()
}
