package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// gateFunc adapts a function to kernel.Gate.
type gateFunc func(call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error

func (f gateFunc) Check(_ context.Context, call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
	return f(call, spec, args)
}

func gatedAgent(t *testing.T, yaml string, rec kernel.Recorder, g kernel.Gate, p *probe) *kernel.Agent {
	t.Helper()
	set, err := tool.New(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	a, err := kernel.New(kernel.Config{Model: scenario(t, yaml), Tools: set, Recorder: rec, Gate: g,
		NewID: func() string { n++; return fmt.Sprintf("id%d", n) }})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// intentCalls returns the call ids of the tool intents recorded.
func intentCalls(rec *kernel.Memory) []string {
	var ids []string
	for _, r := range rec.Records() {
		if in, ok := r.(kernel.Intent); ok && in.Kind == kernel.IntentToolCall {
			ids = append(ids, in.Call.ID)
		}
	}
	return ids
}

func TestGateRefusalIsOneErrorResultWithoutIntent(t *testing.T) {
	const yaml = `
version: 1
turns:
  - calls:
      - {name: p, id: c1, args: {n: 1}}
      - {name: p, id: c2, args: {n: 2}}
      - {name: p, id: c3, args: {n: 3}}
      - {name: p, id: c4, args: {bogus: 1}}
  - text: done
`
	var seen []string
	g := gateFunc(func(call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
		seen = append(seen, call.ID)
		if spec.Name != "p" {
			t.Errorf("gate got spec %q", spec.Name)
		}
		if call.ID == "c2" {
			if string(args) != `{"n": 2}` && string(args) != `{"n":2}` {
				t.Errorf("gate got arguments %s", args)
			}
			return errors.New("policy.denied: p with n=2 is denied")
		}
		return nil
	})
	p := &probe{name: "p"}
	rec := &kernel.Memory{}
	out, err := gatedAgent(t, yaml, rec, g, p).Run(context.Background(), nil, llm.UserText("go"))
	if err != nil || out.Status != kernel.StatusCompleted {
		t.Fatalf("run: %v (status %s); a denial alone does not block the run", err, out.Status)
	}
	if strings.Join(seen, ",") != "c1,c2,c3" {
		t.Errorf("gate consulted for %v; want the valid calls c1,c2,c3 in source order (c4 fails validation first)", seen)
	}
	if ran := p.ran(); len(ran) != 2 || ran[0] == "c2" || ran[1] == "c2" {
		t.Errorf("tool ran for %v; the refused c2 must not run", ran)
	}
	if got := intentCalls(rec); strings.Join(got, ",") != "c1,c3" {
		t.Errorf("intents recorded for %v; want c1,c3 (a refusal has no effect to announce)", got)
	}
	var forC2 int
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok {
			for _, e := range s.Entries {
				if e.Message.ToolCallID == "c2" {
					forC2++
					if s.IntentID != "" || !e.Message.IsError || !strings.Contains(e.Message.Text(), "p with n=2 is denied") {
						t.Errorf("c2 recorded as %+v under intent %q", e.Message, s.IntentID)
					}
				}
			}
		}
	}
	if forC2 != 1 {
		t.Errorf("c2 recorded %d times, want exactly one result", forC2)
	}
	rs := toolResults(out)
	if len(rs) != 4 || rs[1].ToolCallID != "c2" || !rs[1].IsError {
		t.Fatalf("results %+v", rs)
	}
	if len(out.Refused) != 1 || out.Refused[0].Call.ID != "c2" || out.Refused[0].Turn != 1 {
		t.Errorf("Refused = %+v", out.Refused)
	}
}

func TestGateNeedingApprovalBlocksTheRunAtItsEnd(t *testing.T) {
	const yaml = `
version: 1
turns:
  - calls:
      - {name: p, id: c1, args: {n: 1}}
  - text: I could not do it without approval.
`
	g := gateFunc(func(call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
		return fmt.Errorf("policy.approval_required: p needs approval: %w", kernel.ErrNeedsApproval)
	})
	p := &probe{name: "p"}
	rec := &kernel.Memory{}
	out, err := gatedAgent(t, yaml, rec, g, p).Run(context.Background(), nil, llm.UserText("go"))
	if !errors.Is(err, kernel.ErrNeedsApproval) || out.Status != kernel.StatusBlocked {
		t.Fatalf("err %v, status %s; want a blocked run", err, out.Status)
	}
	var be *kernel.BlockedError
	if !errors.As(err, &be) || len(be.Refused) != 1 || !strings.Contains(err.Error(), "p needs approval") {
		t.Errorf("error %v", err)
	}
	// The run itself went on: the model saw the refusal and answered.
	if out.Final.Text() != "I could not do it without approval." || out.Turns != 2 {
		t.Errorf("final %q after %d turns", out.Final.Text(), out.Turns)
	}
	if len(p.ran()) != 0 || len(intentCalls(rec)) != 0 {
		t.Errorf("ran %v, intents %v", p.ran(), intentCalls(rec))
	}
}

func TestReplayConsultsTheGate(t *testing.T) {
	g := gateFunc(func(call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
		return errors.New("policy.denied: no")
	})
	p := &probe{name: "p"}
	a := gatedAgent(t, "version: 1\nturns:\n  - text: x\n", &kernel.Memory{}, g, p)
	res := a.Replay(context.Background(), &llm.ToolCall{ID: "c1", Name: "p", Arguments: `{"n": 1}`})
	if !res.IsError || !strings.Contains(res.Text(), "policy.denied") || len(p.ran()) != 0 {
		t.Errorf("replay gave %q (ran %v)", res.Text(), p.ran())
	}
}
