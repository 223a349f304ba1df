package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
)

// TestLargePayloadsAreBlobs: a tool call above the blob threshold in its intent, and a fact
// value above it, are stored as blobs the records name; they read back after reopening, no line
// nears the cap, and a blob changed on disk fails the open.
func TestLargePayloadsAreBlobs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := `{"content":"` + strings.Repeat("x", 3<<20) + `"}`
	call := &llm.ToolCall{ID: "c1", Name: "write", Arguments: big, ProviderID: "dup"}
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: call}}, StopReason: llm.StopToolUse}
	name := strings.Repeat("n", session.BlobThreshold+1)
	for i, step := range []func() error{
		s.BeginRun,
		func() error {
			return s.Settle(ctx, kernel.Settlement{Entries: []kernel.Entry{{ID: "u1", Message: llm.UserText("go")}, {ID: "a1", Message: asst}}})
		},
		func() error {
			return s.Intend(ctx, kernel.Intent{ID: "i-t1", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r1"}, Call: call})
		},
		func() error { return s.SetFact("name", name) },
	} {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if !s.CallIDUsed("c1") || s.CallIDUsed("dup") {
		t.Errorf("CallIDUsed: c1 %v, dup %v; want the recorded id only", s.CallIDUsed("c1"), s.CallIDUsed("dup"))
	}
	s.Close()

	data, err := os.ReadFile(filepath.Join(dir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if len(line) > 64<<10 {
			t.Errorf("line %d is %d bytes; large payloads belong in blobs", i+1, len(line))
		}
	}
	if !strings.Contains(string(data), `"callBlob":"`) {
		t.Error("the intent does not name its call's blob")
	}
	st, _, err := session.Load(dir)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	in := st.Intents["i-t1"]
	if in == nil || in.Call == nil || in.Call.Arguments != big || in.Call.ProviderID != "dup" {
		t.Fatalf("intent i-t1 read back without its call")
	}
	if st.Name() != name {
		t.Errorf("the name fact read back as %d bytes, want %d", len(st.Name()), len(name))
	}
	s, _, err = session.Open(dir, session.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if !s.CallIDUsed("c1") {
		t.Error("CallIDUsed(c1) is false after reopening")
	}
	s.Close()

	// Every blob is digest-checked on read.
	blobs, _ := filepath.Glob(filepath.Join(dir, "blobs", "sha256", "*", "*"))
	if len(blobs) != 3 {
		t.Fatalf("blobs %v, want the message, the call and the fact", blobs)
	}
	for _, b := range blobs {
		orig, _ := os.ReadFile(b)
		os.Chmod(b, 0o644)
		if err := os.WriteFile(b, append(orig[:len(orig)-1:len(orig)-1], '!'), 0o644); err != nil {
			t.Fatal(err)
		}
		var ce *ledger.CorruptError
		if _, _, err := session.Load(dir); !errors.As(err, &ce) || !strings.Contains(err.Error(), "blob") {
			t.Errorf("changed blob %s: load %v, want a corrupt session naming the blob", filepath.Base(b), err)
		}
		os.WriteFile(b, orig, 0o644)
	}
}
