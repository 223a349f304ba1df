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
//
// A history that needs none of this (the common case: every request of a session that was
// not interrupted) is returned as it is, its capacity clipped so that appending to the result
// copies: Heal then reads each message once and allocates nothing. The result may share msgs'
// elements either way (a healed copy is shallow too), so callers must not modify it.
func Heal(msgs []Message) []Message {
	if healthy(msgs) {
		if msgs == nil {
			return []Message{}
		}
		return msgs[:len(msgs):len(msgs)]
	}
	return healCopy(msgs)
}

// healCopy is Heal building its result message by message.
func healCopy(msgs []Message) []Message {
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

// healthy reports whether Heal would return msgs unchanged: no failed assistant message, and
// the tool results after each assistant message answer its calls exactly, in any order, each
// once, before the next message of another role (results after a user message or at the start
// answer nothing). It allocates nothing.
func healthy(msgs []Message) bool {
	var last *Message // the assistant message the current run of results follows
	results := 0      // results since last
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case RoleTool:
			if last == nil || !answers(last, msgs[i-results:i], m.ToolCallID) {
				return false
			}
			results++
			continue
		case RoleAssistant:
			if m.Failed() {
				return false
			}
		}
		if last != nil && countCalls(last) != results {
			return false // a call without a result
		}
		last, results = nil, 0
		if m.Role == RoleAssistant {
			last = m
		}
	}
	return last == nil || countCalls(last) == results
}

// answers reports whether id names a call of a whose result is not among earlier.
func answers(a *Message, earlier []Message, id string) bool {
	found := false
	for j := range a.Content {
		if p := &a.Content[j]; p.Type == PartToolCall && p.Call != nil && p.Call.ID == id {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	for j := range earlier {
		if earlier[j].ToolCallID == id {
			return false
		}
	}
	return true
}

func countCalls(a *Message) int {
	n := 0
	for j := range a.Content {
		if p := &a.Content[j]; p.Type == PartToolCall && p.Call != nil {
			n++
		}
	}
	return n
}
