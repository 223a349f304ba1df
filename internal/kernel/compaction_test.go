package kernel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// The script model answers summarization requests (they carry a <conversation> transcript) with
// a summary, requests that continue from a summary with "done" (the k-th answer after the
// summary counts the assistant messages kept after it), and the agent's turns with a long text
// each.
const compactScenario = `
version: 1
dialogs:
  - match: "<conversation>"
    turns:
      - text: "## Goal\nwrite things\n## Progress\nwrote a.txt"
  - match: "compacted into the following summary"
    turns: [{text: done}, {text: done}, {text: done}, {text: done}]
  - turns:
      - {text: "step one xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", calls: [{name: p, id: c1, args: {text: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}], usage: {input: 100, output: 20}}
      - {text: "step two yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", calls: [{name: p, id: c2, args: {text: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}], usage: {input: 300, output: 20}}
      - {text: "step three zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", calls: [{name: p, id: c3, args: {text: "cccccccccccccccccccccccccccccccccccccccccccccccc"}}], usage: {input: 500, output: 20}}
      - {text: done, usage: {input: 200, output: 5}}
`

func TestCompactionAtThreshold(t *testing.T) {
	model := scenario(t, compactScenario)
	var requests [][]llm.Message
	spy := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		if len(req.Tools) > 0 { // agent turns, not summaries
			requests = append(requests, append([]llm.Message(nil), req.Messages...))
		}
		return model.Stream(ctx, req, emit)
	})
	rec := &kernel.Memory{}
	comp := &contextpack.Compactor{Model: model, ContextWindow: 450, Reserve: 100, KeepRecent: 30}
	a, err := kernel.New(kernel.Config{Model: spy, Tools: mustSet(t, &probe{name: "p"}), Recorder: rec, Compactor: comp, MaxTurns: 10})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), nil, llm.UserText("write things"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Final.Text() != "done" {
		t.Fatalf("final %q", out.Final.Text())
	}
	var compactions []kernel.Entry
	recorded := map[string]bool{}
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok {
			for _, e := range s.Entries {
				recorded[e.ID] = true
				if e.Compaction != nil {
					compactions = append(compactions, e)
				}
			}
		}
	}
	if len(compactions) == 0 {
		t.Fatal("no compaction was recorded although the context passed window − reserve")
	}
	c := compactions[0]
	if !recorded[c.Compaction.FirstKeptID] {
		t.Errorf("firstKeptId %s is not a recorded entry", c.Compaction.FirstKeptID)
	}
	if !strings.HasPrefix(c.Message.Text(), contextpack.SummaryPrefix) || !strings.Contains(c.Message.Text(), "## Goal") {
		t.Errorf("summary message %q", c.Message.Text())
	}
	if c.Compaction.TokensBefore <= 450-100 {
		t.Errorf("tokensBefore %d, want above the threshold", c.Compaction.TokensBefore)
	}
	// The request after the compaction starts with the summary and never with a tool result.
	last := requests[len(requests)-1]
	if last[0].Role != llm.RoleUser || !strings.HasPrefix(last[0].Text(), contextpack.SummaryPrefix) {
		t.Errorf("the last request starts with %s %q", last[0].Role, last[0].Text())
	}
	if last[1].Role == llm.RoleTool {
		t.Error("the kept part starts with a tool result")
	}
}

func TestOverflowCompactsAndRetriesOnce(t *testing.T) {
	// The first request after the tool call overflows; what the request after the compaction
	// gets is the case's afterSummary answer.
	const yaml = `
version: 1
dialogs:
  - match: "<conversation>"
    turns:
      - text: "## Goal\nsummary"
  - match: "compacted into the following summary"
    turns: [AFTER, AFTER, AFTER]
  - turns:
      - {text: "first answer with some length to it, enough to be summarized later on", calls: [{name: p, id: c1, args: {}}]}
      - {error: {kind: context, status: 400, message: "prompt is too long: 300000 tokens > 200000 maximum"}}
`
	overflow := `{error: {kind: context, status: 400, message: "prompt is too long"}}`
	for _, tc := range []struct {
		after   string
		wantErr bool
	}{{"{text: done}", false}, {overflow, true}} {
		model := scenario(t, strings.ReplaceAll(yaml, "AFTER", tc.after))
		comp := &contextpack.Compactor{Model: model, ContextWindow: 1_000_000, KeepRecent: 5}
		rec := &kernel.Memory{}
		a, err := kernel.New(kernel.Config{Model: model, Tools: mustSet(t, &probe{name: "p"}), Recorder: rec, Compactor: comp, MaxTurns: 10})
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Run(context.Background(), nil, llm.UserText("go"))
		compactions := 0
		for _, r := range rec.Records() {
			if in, ok := r.(kernel.Intent); ok && in.Kind == kernel.IntentCompaction {
				compactions++
			}
		}
		if compactions != 1 {
			t.Errorf("after=%s: %d compactions, want exactly one per run", tc.after, compactions)
		}
		var me *kernel.ModelError
		if tc.wantErr {
			// A second overflow after compacting is not retried again.
			if !errors.As(err, &me) || me.Err.Kind != llm.KindContext {
				t.Errorf("err %v, want the context error", err)
			}
			continue
		}
		if err != nil || out.Final.Text() != "done" {
			t.Errorf("err %v final %q, want the retried request to succeed", err, out.Final.Text())
		}
	}
}

func TestManualCompactionNeedsSomethingToCut(t *testing.T) {
	model := scenario(t, compactScenario)
	comp := &contextpack.Compactor{Model: model, ContextWindow: 100000}
	a, err := kernel.New(kernel.Config{Model: model, Tools: mustSet(t), Recorder: &kernel.Memory{}, Compactor: comp})
	if err != nil {
		t.Fatal(err)
	}
	h := []llm.Message{llm.UserText("hi")}
	h[0].ID = "u1"
	if _, err := a.Compact(context.Background(), h, ""); !errors.Is(err, kernel.ErrCompactionFailed) {
		t.Errorf("compacting a one-message history: %v, want ErrCompactionFailed", err)
	}
}
