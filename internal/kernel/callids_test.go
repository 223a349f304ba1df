package kernel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// withIDs makes the model answer with the tool-call ids of ids[turn-1] (in call order), as a
// provider that sends whatever ids it likes would.
func withIDs(m llm.Model, ids ...[]string) llm.Model {
	var mu sync.Mutex
	turn := 0
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		msg := m.Stream(ctx, req, emit)
		mu.Lock()
		defer mu.Unlock()
		if turn < len(ids) {
			for i, c := range msg.ToolCalls() {
				c.ID = ids[turn][i]
			}
		}
		turn++
		return msg
	})
}

// checkPairing fails unless every tool call of the run's assistant messages has a distinct id
// that one result answers, the result recorded right after its message's calls.
func checkPairing(t *testing.T, msgs []llm.Message) map[string]string {
	t.Helper()
	provider := map[string]string{} // assigned id -> provider id
	calls := map[string]bool{}
	answered := map[string]int{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls() {
			if calls[c.ID] || c.ID == "" {
				t.Errorf("call id %q is not unique in the run", c.ID)
			}
			calls[c.ID] = true
			if strings.HasPrefix(c.ID, "rein_") {
				provider[c.ID] = c.ProviderID
			}
		}
		if m.Role == llm.RoleTool {
			if !calls[m.ToolCallID] {
				t.Errorf("result for %q answers no call", m.ToolCallID)
			}
			answered[m.ToolCallID]++
		}
	}
	for id := range calls {
		if answered[id] != 1 {
			t.Errorf("call %q has %d results, want 1", id, answered[id])
		}
	}
	return provider
}

func TestDuplicateCallIDsInOneMessageGetUniqueIDs(t *testing.T) {
	model := withIDs(scenario(t, `
version: 1
turns:
  - calls:
      - {name: p, args: {n: 1}}
      - {name: p, args: {n: 2}}
      - {name: p, args: {n: 3}}
  - text: done
`), []string{"call_1", "call_1", "call_1"})
	p := &probe{name: "p"}
	rec := &kernel.Memory{}
	a, _ := newAgent(t, model, rec, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	got := checkPairing(t, out.Messages)
	want := map[string]string{"rein_1_call_1": "call_1", "rein_2_call_1": "call_1"}
	if len(got) != len(want) || got["rein_1_call_1"] != "call_1" || got["rein_2_call_1"] != "call_1" {
		t.Errorf("assigned ids %v, want %v (the first call keeps its id)", got, want)
	}
	ran := p.ran()
	slices.Sort(ran)
	if strings.Join(ran, ",") != "call_1,rein_1_call_1,rein_2_call_1" {
		t.Errorf("the tool ran as %v, want call_1 and the two assigned ids", ran)
	}
	// The recorded assistant message (the settlement) holds the assigned ids and the mapping.
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok && len(s.Entries) == 1 && s.Entries[0].Message.Role == llm.RoleAssistant {
			if cs := s.Entries[0].Message.ToolCalls(); len(cs) == 3 && (cs[1].ID != "rein_1_call_1" || cs[1].ProviderID != "call_1" || cs[0].ProviderID != "") {
				t.Errorf("recorded calls %+v %+v, want the second renamed with its provider id kept", *cs[0], *cs[1])
			}
		}
	}
}

func TestCallIDReusedAcrossTurnsGetsAUniqueID(t *testing.T) {
	model := withIDs(scenario(t, `
version: 1
turns:
  - calls:
      - {name: p, args: {n: 1}}
  - calls:
      - {name: p, args: {n: 2}}
  - text: done
`), []string{"toolu_A"}, []string{"toolu_A"})
	p := &probe{name: "p"}
	a, _ := newAgent(t, model, &kernel.Memory{}, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := checkPairing(t, out.Messages); len(got) != 1 || got["rein_1_toolu_A"] != "toolu_A" {
		t.Errorf("assigned ids %v, want the second turn's call renamed rein_1_toolu_A", got)
	}

	// A later run reusing an id of its history (the session continued) is renamed too.
	model = withIDs(scenario(t, `
version: 1
turns:
  - calls:
      - {name: p, args: {n: 3}}
  - text: again
`), []string{"rein_1_toolu_A"})
	a, _ = newAgent(t, model, &kernel.Memory{}, p)
	out2, err := a.Run(context.Background(), out.Messages, llm.UserText("more"))
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	all := append(append([]llm.Message(nil), out.Messages...), out2.Messages...)
	if got := checkPairing(t, all); len(got) != 2 || got["rein_1_rein_1_toolu_A"] != "rein_1_toolu_A" {
		t.Errorf("assigned ids %v, want the reused rein_1_toolu_A renamed rein_1_rein_1_toolu_A", got)
	}
}

// recordedIDs is a recorder that knows ids the context does not hold (compacted away).
type recordedIDs struct {
	kernel.Memory
	used map[string]bool
}

func (r *recordedIDs) CallIDUsed(id string) bool { return r.used[id] }

func TestCallIDUsedOutsideTheContextIsReplaced(t *testing.T) {
	model := withIDs(scenario(t, `
version: 1
turns:
  - calls:
      - {name: p, args: {n: 1}}
  - text: done
`), []string{"old"})
	a, _ := newAgent(t, model, &recordedIDs{used: map[string]bool{"old": true, "rein_1_old": true}}, &probe{name: "p"})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := checkPairing(t, out.Messages); got["rein_2_old"] != "old" {
		t.Errorf("assigned ids %v, want rein_2_old (old and rein_1_old are recorded)", got)
	}
}

func TestEmptyAndInvalidCallIDsGetAssignedIDs(t *testing.T) {
	long := strings.Repeat("x", kernel.MaxCallIDBytes+1)
	model := withIDs(scenario(t, `
version: 1
turns:
  - calls:
      - {name: p, args: {n: 1}}
      - {name: p, args: {n: 2}}
      - {name: p, args: {n: 3}}
      - {name: p, args: {n: 4}}
      - {name: p, args: {n: 5}}
  - text: done
`), []string{"", "", "a b\"\n", long, "ok.id:1-x_Y"})
	a, _ := newAgent(t, model, &kernel.Memory{}, &probe{name: "p"})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	got := checkPairing(t, out.Messages)
	var ids []string
	for _, c := range out.Messages[1].ToolCalls() {
		ids = append(ids, c.ID)
	}
	// The least free n for each shape; an assigned id is at most 40 bytes.
	wantLong := "rein_1_" + strings.Repeat("x", 40-len("rein_1_"))
	want := []string{"rein_1", "rein_2", "rein_1_ab", wantLong, "ok.id:1-x_Y"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("ids %v, want %v", ids, want)
	}
	if got[wantLong] != long || got["rein_1_ab"] != "a b\"\n" || len(got) != 4 {
		t.Errorf("provider ids %q, want the originals kept", got)
	}
}

func TestArgumentsAboveTheCapGetAToolError(t *testing.T) {
	big := `{"text":"` + strings.Repeat("a", 10<<20) + `"}`
	huge := `{"text":"` + strings.Repeat("b", kernel.MaxArgumentBytes) + `"}`
	inner := scenario(t, `
version: 1
turns:
  - calls:
      - {name: p, id: c1, args: {text: BIG}}
      - {name: p, id: c2, args: {text: HUGE}}
  - text: done
`)
	model := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		msg := inner.Stream(ctx, req, emit)
		for _, c := range msg.ToolCalls() {
			c.Arguments = strings.NewReplacer(`{"text":"BIG"}`, big, `{"text":"HUGE"}`, huge).Replace(c.Arguments)
		}
		return msg
	})
	p := &probe{name: "p", onRun: func(call tool.Call) (tool.Result, error) {
		return tool.TextResult(fmt.Sprintf("got %d bytes", len(call.Args))), nil
	}}
	a, _ := newAgent(t, model, &kernel.Memory{}, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil || out.Final.Text() != "done" {
		t.Fatalf("run: %v (final %v); the run must go on", err, out.Final)
	}
	rs := toolResults(out)
	if len(rs) != 2 || rs[0].IsError || rs[0].Text() != fmt.Sprintf("got %d bytes", len(big)) {
		t.Fatalf("results %v; want the 10 MB call run", rs)
	}
	want := fmt.Sprintf("arguments too large: %d bytes, limit %d", len(huge), kernel.MaxArgumentBytes)
	if !rs[1].IsError || !strings.Contains(rs[1].Text(), want) {
		t.Errorf("the call above the cap got %q, want an error saying %q", rs[1].Text(), want)
	}
	if ran := p.ran(); len(ran) != 1 || ran[0] != "c1" {
		t.Errorf("the tool ran for %v, want c1 only", ran)
	}
}
