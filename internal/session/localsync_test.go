package session_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
)

// probed runs check before the tool it wraps.
type probed struct {
	tool.Tool
	check func(call string)
}

func (p probed) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	p.check(c.ID)
	return p.Tool.Run(ctx, c)
}

// TestLocalCallsRideOnTheNextFsync: the intent of a local, replay-safe call (read) is written
// without an fsync of its own — a power loss while the read runs finds neither it nor the
// answer that asked for it — and becomes durable with the next model call's intent; the
// intent of any other call (append, a side effect) is durable before its tool starts.
func TestLocalCallsRideOnTheNextFsync(t *testing.T) {
	m := ledgertest.NewMemFS()
	m.MkdirAll("/s")
	dir := "/s/session"
	syncs := 0
	fsys := &ledgertest.FaultFS{FS: m, Inject: func(op ledgertest.Op) *ledgertest.Fault {
		if op.Kind == "sync" && filepath.Base(op.Name) == ledger.FileName {
			syncs++
		}
		return nil
	}}
	s, err := session.Create(dir, session.Meta{ID: "local"}, session.Options{Ledger: ledger.Options{FS: fsys}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	// durable lists the record kinds and call ids a power loss now would leave.
	durable := func() (intents map[string]bool, entries int) {
		l, _, err := ledger.OpenReadOnly(dir, ledger.Options{FS: m.Crash(ledgertest.DropUnsynced, nil)})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		intents = map[string]bool{}
		for r, err := range l.Records() {
			if err != nil {
				t.Fatal(err)
			}
			switch r.Kind {
			case session.KindIntent:
				for _, id := range []string{"r1", "r2", "a1"} {
					if containsCall(r.Body, id) {
						intents[id] = true
					}
				}
			case session.KindEntry:
				entries++
			}
		}
		return intents, entries
	}
	var syncsAtAnswer int
	ran := map[string]bool{}
	check := func(call string) {
		ran[call] = true
		intents, _ := durable()
		switch call {
		case "r1", "r2":
			if intents[call] {
				t.Errorf("the intent of local call %s was fsynced before it ran", call)
			}
			if syncs != syncsAtAnswer {
				t.Errorf("%d ledger fsyncs between the model's answer and local call %s", syncs-syncsAtAnswer, call)
			}
		case "a1":
			if !intents[call] {
				t.Errorf("the intent of side-effect call %s was not durable when it started", call)
			}
		}
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "effects.txt"), []byte("zero\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := tool.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.New(probed{fstool.Read(w), check}, probed{appendTool{dir: ws}, check})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := script.Parse([]byte(`
version: 1
turns:
  - calls:
      - {name: read, id: r1, args: {path: effects.txt}}
      - {name: read, id: r2, args: {path: effects.txt, offset: 1}}
  - calls:
      - {name: append, id: a1, args: {line: one}}
  - text: done
`), "local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	requests := 0
	model := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		requests++
		if requests == 2 {
			// The reads' intents and results are durable with this model call's intent.
			intents, entries := durable()
			if !intents["r1"] || !intents["r2"] {
				t.Errorf("at the second model request the reads' intents are not durable: %v", intents)
			}
			if entries < 4 { // the prompt, the answer, two results
				t.Errorf("at the second model request %d entries are durable, want the prompt, the answer and both results", entries)
			}
		}
		out := sc.Stream(ctx, req, emit)
		syncsAtAnswer = syncs
		return out
	})
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: s})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), nil, llm.UserText("read, then append"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != kernel.StatusCompleted || !ran["r1"] || !ran["r2"] || !ran["a1"] {
		t.Fatalf("status %s, ran %v", out.Status, ran)
	}
}

// containsCall reports whether an intent body names tool call id.
func containsCall(body []byte, id string) bool {
	return bytes.Contains(body, []byte(`"id":"`+id+`"`))
}
