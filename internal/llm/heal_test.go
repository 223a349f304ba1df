package llm

import (
	"math/rand/v2"

	"github.com/google/go-cmp/cmp/cmpopts"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHeal(t *testing.T) {
	call := func(id string) Part { return Call(id, "read", `{}`) }
	result := func(id string) Message {
		return ToolResultText(&ToolCall{ID: id, Name: "read"}, "ok "+id, false)
	}
	synthetic := func(id string) Message {
		return Message{Role: RoleTool, ToolCallID: id, ToolName: "read", Content: []Part{Text(NoResultText)}, IsError: true}
	}
	asst := func(parts ...Part) Message {
		return Message{Role: RoleAssistant, StopReason: StopToolUse, Content: parts}
	}
	failed := Message{Role: RoleAssistant, StopReason: StopError, Content: []Part{Text("partial"), call("x1")},
		Err: &Error{Kind: KindNetwork, Message: "cut"}}
	aborted := Message{Role: RoleAssistant, StopReason: StopAborted, Content: []Part{Text("par")}}

	tests := []struct {
		name string
		in   []Message
		want []Message
	}{
		{"empty", nil, []Message{}},
		{"complete history unchanged",
			[]Message{UserText("hi"), asst(Text("a"), call("c1"), call("c2")), result("c1"), result("c2"), UserText("next")},
			[]Message{UserText("hi"), asst(Text("a"), call("c1"), call("c2")), result("c1"), result("c2"), UserText("next")}},
		{"failed and aborted assistants dropped",
			[]Message{UserText("hi"), failed, UserText("again"), aborted, UserText("once more")},
			[]Message{UserText("hi"), UserText("again"), UserText("once more")}},
		{"missing result at the end",
			[]Message{UserText("hi"), asst(call("c1"), call("c2")), result("c2")},
			[]Message{UserText("hi"), asst(call("c1"), call("c2")), result("c2"), synthetic("c1")}},
		{"missing results before a user message",
			[]Message{UserText("hi"), asst(call("c1")), UserText("stop"), asst(Text("ok"))},
			[]Message{UserText("hi"), asst(call("c1")), synthetic("c1"), UserText("stop"), asst(Text("ok"))}},
		{"missing results before the next assistant message",
			[]Message{UserText("hi"), asst(call("c1")), asst(call("c2")), result("c2")},
			[]Message{UserText("hi"), asst(call("c1")), synthetic("c1"), asst(call("c2")), result("c2")}},
		{"results of a dropped failed message dropped",
			[]Message{UserText("hi"), failed, result("x1"), UserText("again")},
			[]Message{UserText("hi"), UserText("again")}},
		{"orphan and duplicate results dropped",
			[]Message{result("z"), UserText("hi"), asst(call("c1")), result("c1"), result("c1"), result("zz")},
			[]Message{UserText("hi"), asst(call("c1")), result("c1")}},
		{"failed retry between call and result keeps the pairing",
			[]Message{UserText("hi"), asst(call("c1")), result("c1"), failed, asst(call("c2")), result("c2")},
			[]Message{UserText("hi"), asst(call("c1")), result("c1"), asst(call("c2")), result("c2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]Message(nil), tt.in...)
			got := Heal(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Heal (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tt.in); diff != "" {
				t.Errorf("Heal modified its input:\n%s", diff)
			}
		})
	}
}

// TestHealFastPath checks, on random histories, that Heal returns what healing message by
// message returns, and that a history the fast path passes through is one healing leaves
// unchanged.
func TestHealFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []string{"a", "b", "c"}
	passed := 0
	for range 20000 {
		var msgs []Message
		for range rng.IntN(8) {
			switch rng.IntN(6) {
			case 0:
				msgs = append(msgs, UserText("u"))
			case 1, 2:
				m := Message{Role: RoleAssistant, StopReason: StopToolUse}
				for range rng.IntN(3) {
					m.Content = append(m.Content, Call(ids[rng.IntN(len(ids))], "read", "{}"))
				}
				if rng.IntN(8) == 0 {
					m.StopReason = StopError
				}
				msgs = append(msgs, m)
			default:
				msgs = append(msgs, ToolResultText(&ToolCall{ID: ids[rng.IntN(len(ids))], Name: "read"}, "r", false))
			}
		}
		want := healCopy(msgs)
		if diff := cmp.Diff(want, Heal(msgs), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Heal(%v) (-healCopy +Heal):\n%s", msgs, diff)
		}
		if _, ok := check(msgs, HealMark{}); ok {
			passed++
			if diff := cmp.Diff(msgs, want, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("check(%v) passes, but healing changes it:\n%s", msgs, diff)
			}
		}
	}
	if passed < 1000 {
		t.Fatalf("only %d random histories took the fast path", passed)
	}
}

// TestHealGrownGoesOnFromTheMark checks, on random histories, that Heal's check resumed from
// the mark of any healthy prefix decides as the check from the start does and ends at the same
// mark, and that HealGrown returns what Heal returns.
func TestHealGrownGoesOnFromTheMark(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := []string{"a", "b", "c"}
	resumed := 0
	for range 20000 {
		var msgs []Message
		for range rng.IntN(10) {
			switch rng.IntN(5) {
			case 0:
				msgs = append(msgs, UserText("u"))
			case 1:
				m := Message{Role: RoleAssistant, StopReason: StopToolUse}
				for range rng.IntN(3) {
					m.Content = append(m.Content, Call(ids[rng.IntN(len(ids))], "read", "{}"))
				}
				if rng.IntN(10) == 0 {
					m.StopReason = StopAborted
				}
				msgs = append(msgs, m)
			default:
				msgs = append(msgs, ToolResultText(&ToolCall{ID: ids[rng.IntN(len(ids))], Name: "read"}, "r", false))
			}
		}
		whole, wholeOK := check(msgs, HealMark{})
		for k := range len(msgs) + 1 {
			mark, ok := check(msgs[:k], HealMark{})
			if !ok {
				continue
			}
			resumed++
			got, gotOK := check(msgs, mark)
			if got != whole || gotOK != wholeOK {
				t.Fatalf("check of %v from the mark of its first %d messages: %+v %v, from the start: %+v %v", msgs, k, got, gotOK, whole, wholeOK)
			}
			healed, next := HealGrown(msgs, mark)
			if diff := cmp.Diff(Heal(msgs), healed, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("HealGrown(%v, mark of %d) (-Heal +HealGrown):\n%s", msgs, k, diff)
			}
			if wantLen := map[bool]int{true: len(msgs), false: 0}[wholeOK]; next.Len() != wantLen {
				t.Fatalf("HealGrown(%v): mark of %d messages, want %d", msgs, next.Len(), wantLen)
			}
		}
	}
	if resumed < 20000 {
		t.Fatalf("only %d checks resumed from a mark", resumed)
	}
	// A mark longer than the history is ignored.
	long, _ := check(loopHistory(3), HealMark{})
	if got, ok := check([]Message{UserText("u"), {Role: RoleTool, ToolCallID: "x"}}, long); ok || got != (HealMark{}) {
		t.Fatalf("a mark longer than the history was trusted: %+v %v", got, ok)
	}
}
