package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/llm"
)

func call() *hooks.BeforeTool {
	return &hooks.BeforeTool{Call: &llm.ToolCall{ID: "c", Name: "p"}, Args: json.RawMessage(`{"n":1}`)}
}

func TestOrderChainsAndFirstDecisionWins(t *testing.T) {
	var runs []string
	reg := hooks.New(hooks.Options{Report: func(r hooks.Run) { runs = append(runs, fmt.Sprintf("%s=%s", r.Hook, r.Outcome)) }})
	for i := range 3 {
		hooks.On(reg, fmt.Sprintf("h%d", i), func(_ context.Context, ev *hooks.BeforeTool) error {
			ev.Args = append(append(json.RawMessage(nil), ev.Args...), byte('0'+i))
			return nil
		})
	}
	hooks.On(reg, "skipped", func(_ context.Context, ev *hooks.BeforeTool) error {
		t.Error("a hook whose matcher refused the payload ran")
		return nil
	}, hooks.Match(func(hooks.Event) bool { return false }))
	hooks.On(reg, "block", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Block = errors.New("no")
		return nil
	})
	hooks.On(reg, "after", func(_ context.Context, ev *hooks.BeforeTool) error {
		t.Error("a hook after the first block ran")
		return nil
	})
	ev := call()
	if err := reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if string(ev.Args) != `{"n":1}012` || ev.Block == nil {
		t.Errorf("args %s block %v", ev.Args, ev.Block)
	}
	if got := strings.Join(runs, " "); got != "h0=changed h1=changed h2=changed block=blocked" {
		t.Errorf("runs %s", got)
	}
	if !reg.Has(hooks.PointBeforeTool) || reg.Has(hooks.PointAfterTool) {
		t.Error("Has")
	}
}

func TestFailuresRestoreThePayloadAndStopKeepsIt(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "err", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Args = json.RawMessage(`{"n":2}`)
		return errors.New("oops")
	})
	ev := call()
	if err := reg.Run(context.Background(), ev); err != nil || string(ev.Args) != `{"n":1}` {
		t.Errorf("fail open: %v, args %s", err, ev.Args)
	}

	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "panic", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Args = json.RawMessage(`{"n":2}`)
		panic("boom")
	}, hooks.FailClosed())
	ev = call()
	err := reg.Run(context.Background(), ev)
	var he *hooks.Error
	if !errors.As(err, &he) || he.Hook != "panic" || he.Point != hooks.PointBeforeTool || !strings.Contains(err.Error(), "boom") || string(ev.Args) != `{"n":1}` {
		t.Errorf("fail closed: %v, args %s", err, ev.Args)
	}

	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "stop", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Args = json.RawMessage(`{"n":3}`)
		return hooks.StopRun("enough")
	})
	ev = call()
	err = reg.Run(context.Background(), ev)
	var stop *hooks.StopError
	if !errors.As(err, &stop) || stop.Reason != "enough" || string(ev.Args) != `{"n":3}` {
		t.Errorf("stop: %v, args %s", err, ev.Args)
	}
}

func TestRunIsSafeForConcurrentUse(t *testing.T) {
	var mu sync.Mutex
	n := 0
	reg := hooks.New(hooks.Options{Report: func(hooks.Run) { mu.Lock(); n++; mu.Unlock() }})
	hooks.On(reg, "count", func(_ context.Context, ev *hooks.AfterTool) error { return nil })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res := llm.Message{Role: llm.RoleTool}
			_ = reg.Run(context.Background(), &hooks.AfterTool{Call: &llm.ToolCall{}, Result: &res})
		})
	}
	wg.Wait()
	if n != 8 {
		t.Errorf("%d runs reported", n)
	}
}
