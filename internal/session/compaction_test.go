package session_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
)

const compactingScenario = `
version: 1
dialogs:
  - match: "<conversation>"
    turns: [{text: "## Goal\nwrite notes"}]
  - match: "compacted into the following summary"
    turns: [{text: done}, {text: done}, {text: done}]
  - turns:
      - {text: "writing the first file with a long explanation of what it holds", calls: [{name: write, id: w1, args: {path: a.txt, content: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}], usage: {input: 200, output: 30}}
      - {text: "writing the second file with a long explanation of what it holds", calls: [{name: write, id: w2, args: {path: b.txt, content: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}], usage: {input: 400, output: 30}}
      - {text: done}
`

// TestCompactionIsRecordedAndResumed: a compaction during a run becomes a summary entry; the
// reopened session's context is the summary followed by the kept entries, exactly what the
// kernel sent last, while the whole transcript stays in the ledger.
func TestCompactionIsRecordedAndResumed(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model, err := script.Parse([]byte(compactingScenario), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var last []llm.Message
	spy := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		if len(req.Tools) > 0 {
			last = append([]llm.Message(nil), req.Messages...)
		}
		return model.Stream(ctx, req, emit)
	})
	w, _ := tool.OpenWorkspace(ws)
	defer w.Close()
	set, _ := tool.New(fstool.All(w)...)
	a, _ := kernel.New(kernel.Config{Model: spy, Tools: set, Recorder: s, MaxTurns: 10,
		Compactor: &contextpack.Compactor{Model: model, ContextWindow: 500, Reserve: 100, KeepRecent: 20}})
	s.BeginRun()
	out, err := a.Run(context.Background(), nil, llm.UserText("write notes"))
	if err != nil {
		t.Fatal(err)
	}
	s.EndRun(string(out.Status))
	s.Close()

	st, _, err := session.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := session.Open(dir, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	ctx := s2.Context()
	if !strings.HasPrefix(ctx[0].Text(), contextpack.SummaryPrefix) {
		t.Fatalf("resumed context starts with %q, want the summary", ctx[0].Text())
	}
	// The last request the kernel sent is a prefix of the resumed context.
	if diff := cmp.Diff(stripTimes(last), stripTimes(ctx[:len(last)])); diff != "" {
		t.Errorf("resumed context differs from the last request (-request +session):\n%s", diff)
	}
	// Nothing was deleted: the transcript still has the first turn.
	if len(st.Order) <= len(ctx) {
		t.Errorf("the ledger holds %d entries, the context %d: the transcript must stay", len(st.Order), len(ctx))
	}
}

// TestUsageCountsCompactionsAndNotForkedEntries: the summarization cost of a compaction reaches
// the session's usage, and a fork does not count its parent's usage again.
func TestUsageCountsCompactionsAndNotForkedEntries(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scenario := strings.Replace(compactingScenario, `turns: [{text: "## Goal\nwrite notes"}]`,
		`turns: [{text: "## Goal\nwrite notes", usage: {input: 1000, output: 100}}]`, 1)
	model, err := script.Parse([]byte(scenario), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tool.OpenWorkspace(ws)
	defer w.Close()
	set, _ := tool.New(fstool.All(w)...)
	a, _ := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: s, MaxTurns: 10,
		Compactor: &contextpack.Compactor{Model: model, ContextWindow: 500, Reserve: 100, KeepRecent: 20}})
	out, err := a.Run(context.Background(), nil, llm.UserText("write notes"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, _, err := session.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Usage.Input != out.Usage.Input || st.Usage.Input < 1000 {
		t.Errorf("session usage %d input tokens, the run spent %d (summaries included)", st.Usage.Input, out.Usage.Input)
	}
	forked, err := session.Fork(st, "", filepath.Join(t.TempDir(), "f"), session.Meta{ID: "f", Cwd: ws}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	forked.Close()
	fst, _, err := session.Load(filepath.Join(filepath.Dir(forked.Dir()), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if fst.Usage.Input != 0 {
		t.Errorf("a fork counts %d input tokens of its parent", fst.Usage.Input)
	}
}
