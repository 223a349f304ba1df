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
	healed, _ := HealGrown(msgs, HealMark{})
	return healed
}

// HealMark is where Heal's check of a history that needed no healing ended, so that the check
// of the same history grown since goes on from there ([HealGrown]). The zero value is the
// start of any history.
type HealMark struct {
	n       int // messages checked
	last    int // 1 + the index of the assistant message the results at the end follow; 0: none
	results int // tool results since that message
}

// Len returns the number of messages the mark covers.
func (m HealMark) Len() int { return m.n }

// HealGrown is [Heal] for a history whose first mark.Len() messages are, unmodified, those
// of the history mark was returned for (the caller vouches for it, for example through a
// [Request.Lineage]): only the messages after them are read, so a growing history costs what
// its new messages cost. It returns the healed history and, when msgs needed no healing (they
// are returned as they are), the mark at their end; otherwise the zero mark. A mark longer
// than msgs is ignored: the check starts at the first message.
func HealGrown(msgs []Message, mark HealMark) ([]Message, HealMark) {
	if next, ok := check(msgs, mark); ok {
		if msgs == nil {
			return []Message{}, next
		}
		return msgs[:len(msgs):len(msgs)], next
	}
	return healCopy(msgs), HealMark{}
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

// check reports whether Heal would return msgs unchanged, reading them from mark on: no
// failed assistant message, and the tool results after each assistant message answer its calls
// exactly, in any order, each once, before the next message of another role (results after a
// user message or at the start answer nothing). It returns the mark at the end of msgs and
// allocates nothing.
func check(msgs []Message, mark HealMark) (HealMark, bool) {
	s := mark
	if s.n > len(msgs) {
		s = HealMark{}
	}
	for i := s.n; i < len(msgs); i++ {
		m := &msgs[i]
		switch m.Role {
		case RoleTool:
			if s.last == 0 || !answers(&msgs[s.last-1], msgs[i-s.results:i], m.ToolCallID) {
				return HealMark{}, false
			}
			s.results++
			continue
		case RoleAssistant:
			if m.Failed() {
				return HealMark{}, false
			}
		}
		if s.last != 0 && countCalls(&msgs[s.last-1]) != s.results {
			return HealMark{}, false // a call without a result
		}
		s.last, s.results = 0, 0
		if m.Role == RoleAssistant {
			s.last = i + 1
		}
	}
	s.n = len(msgs)
	if s.last != 0 && countCalls(&msgs[s.last-1]) != s.results {
		return HealMark{}, false
	}
	return s, true
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
