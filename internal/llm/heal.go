package llm

import "slices"

// NoResultText is the text of the synthetic tool result [Heal] inserts for a tool call that has
// none.
const NoResultText = "No result provided"

// Heal returns msgs made sendable to a provider, without modifying msgs:
//
//   - assistant messages that [Message.Failed] (stop reason error or aborted) are dropped;
//   - a tool call of an assistant message that gets no tool result before the next user or
//     assistant message (or the end of the list) gets a synthetic error result
//     ([NoResultText]), inserted after the results that are there;
//   - tool results that answer no call of the assistant message they follow are dropped (for
//     example the results of a dropped failed message), since providers reject them.
//
// Every adapter applies Heal while building a request, so any history, including one forked at
// an arbitrary point or interrupted by a crash, can be sent.
func Heal(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	var pending []*ToolCall // calls of the last assistant message still waiting for a result
	var open bool           // whether tool results may follow (an assistant message came last)
	flush := func() {
		for _, c := range pending {
			out = append(out, Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name,
				Content: []Part{Text(NoResultText)}, IsError: true})
		}
		pending = nil
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case RoleTool:
			if !open {
				continue
			}
			k := -1
			for j, c := range pending {
				if c.ID == m.ToolCallID {
					k = j
					break
				}
			}
			if k < 0 {
				continue // answers no pending call
			}
			pending = slices.Delete(pending, k, k+1)
			out = append(out, *m)
		case RoleAssistant:
			if m.Failed() {
				continue
			}
			flush()
			out = append(out, *m)
			pending, open = m.ToolCalls(), true
		default:
			flush()
			open = false
			out = append(out, *m)
		}
	}
	flush()
	return out
}
