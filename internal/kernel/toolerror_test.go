package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// TestOnToolErrorSeesTheErrorValue: every call answered with an error reaches OnToolError
// with the error value itself — a tool not offered, arguments that do not validate, the
// gate's refusal and the tool's own error, a *refusal.Error keeping its code — and a call
// with a result does not.
func TestOnToolErrorSeesTheErrorValue(t *testing.T) {
	const yaml = `
version: 1
turns:
  - calls:
      - {name: p, id: ok, args: {n: 1}}
      - {name: p, id: gated, args: {n: 2}}
      - {name: p, id: fails, args: {n: 3}}
      - {name: p, id: invalid, args: {bogus: 1}}
      - {name: nope, id: missing, args: {}}
  - text: done
`
	var mu sync.Mutex
	seen := map[string]error{}
	p := &probe{name: "p", onRun: func(call tool.Call) (tool.Result, error) {
		if call.ID == "fails" {
			return tool.Result{}, refusal.Errorf("test.tool_code", "whatever the tool says")
		}
		return tool.TextResult("fine"), nil
	}}
	set, err := tool.New(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	a, err := kernel.New(kernel.Config{Model: scenario(t, yaml), Tools: set, Recorder: &kernel.Memory{},
		Gate: gateFunc(func(call *llm.ToolCall, _ tool.Spec, _ json.RawMessage) error {
			if call.ID == "gated" {
				return refusal.Errorf("test.gate_code", "whatever the gate says")
			}
			return nil
		}),
		OnToolError: func(call *llm.ToolCall, err error) {
			mu.Lock()
			defer mu.Unlock()
			seen[call.ID] = err
		},
		NewID: func() string { n++; return fmt.Sprintf("id%d", n) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"fails", "gated", "invalid", "missing"}) {
		t.Fatalf("OnToolError saw %q", ids)
	}
	for id, want := range map[string]refusal.Code{"gated": "test.gate_code", "fails": "test.tool_code"} {
		if c, ok := refusal.CodeOf(seen[id]); !ok || c != want {
			t.Errorf("%s: code %q, want %q (%v)", id, c, want, seen[id])
		}
	}
	if !errors.As(seen["invalid"], new(*tool.ValidationError)) {
		t.Errorf("invalid arguments: %T %v", seen["invalid"], seen["invalid"])
	}
}
