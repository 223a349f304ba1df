package session_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// TestOneFileFsyncBeforeTheFirstModelCall: a new session started as rein starts one — its
// directory made with the missing parents, the configuration facts set, a run begun, a prompt
// sent — fsyncs its ledger once before the first model request (the model-call intent, which
// everything before it rides on), then the directories whose entries lead to the file, the
// session's own first and outward, and nothing else.
func TestOneFileFsyncBeforeTheFirstModelCall(t *testing.T) {
	const home = "/home/u"
	m := ledgertest.NewMemFS()
	m.MkdirAll(home)
	dir := filepath.Join(home, ".rein", "sessions", "project", "s1")
	var ops []string
	fsys := &ledgertest.FaultFS{FS: m, Inject: func(op ledgertest.Op) *ledgertest.Fault {
		switch op.Kind {
		case "sync":
			ops = append(ops, "fsync "+filepath.Base(op.Name))
		case "syncdir":
			rel, _ := filepath.Rel(home, op.Name)
			ops = append(ops, "fsync dir "+rel)
		}
		return nil
	}}
	s, err := session.Create(dir, session.Meta{ID: "s1"}, session.Options{Ledger: ledger.Options{FS: fsys}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, f := range [][2]string{{"provider", "openai-compat"}, {"model", "mock"}, {"baseUrl", "http://127.0.0.1/v1"}} {
		if err := s.SetFact(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	var before []string
	var kinds []string // the records a power loss at the first request leaves
	model := llm.ModelFunc(func(context.Context, *llm.Request, func(llm.Event)) *llm.Message {
		if before == nil {
			before = slices.Clone(ops)
			l, _, err := ledger.OpenReadOnly(dir, ledger.Options{FS: m.Crash(ledgertest.DropUnsynced, nil)})
			if err != nil {
				t.Fatalf("after a power loss at the first request: %v", err)
			}
			for r, err := range l.Records() {
				if err != nil {
					t.Fatal(err)
				}
				kinds = append(kinds, r.Kind)
			}
			l.Close()
		}
		return &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: "done"}}, StopReason: llm.StopEnd}
	})
	set, _ := tool.New()
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	want := []string{"fsync " + ledger.FileName, "fsync dir .rein/sessions/project/s1", "fsync dir .rein/sessions/project",
		"fsync dir .rein/sessions", "fsync dir .rein", "fsync dir ."}
	if !slices.Equal(before, want) {
		t.Fatalf("fsyncs before the first model request:\n%q\nwant\n%q", before, want)
	}
	// The facts, the run's start and the prompt are durable with the intent.
	wantKinds := []string{ledger.KindHeader, session.KindFact, session.KindFact, session.KindFact, session.KindRun, session.KindEntry, session.KindIntent}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("a power loss at the first request leaves %q, want %q", kinds, wantKinds)
	}
}
