package llm

import (
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
