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
		if healthy(msgs) {
			passed++
			if diff := cmp.Diff(msgs, want, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("healthy(%v), but healing changes it:\n%s", msgs, diff)
			}
		}
	}
	if passed < 1000 {
		t.Fatalf("only %d random histories took the fast path", passed)
	}
}
