package wire

import (
	"strings"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// Converter turns kernel events into wire events. It remembers the output each running tool
// reported last, to send only what was added; use one per stream.
type Converter struct {
	shown map[string]string // tool call id -> output text of its last update
}

// Convert returns the wire event for ev; ok is false for events the stream does not carry
// (a provider stream's start, done and error, which message_start and message_end cover; a
// tool update that added nothing; event types this schema does not know).
func (c *Converter) Convert(ev kernel.Event) (Event, bool) {
	w := Event{V: Version, Type: string(ev.Type), Turn: ev.Turn}
	switch ev.Type {
	case kernel.EventAgentStart, kernel.EventTurnStart:
	case kernel.EventMessageStart, kernel.EventMessageEnd:
		w.Message = NewMessage(ev.Message)
	case kernel.EventMessageUpdate:
		e := ev.LLM
		switch e.Type {
		case llm.EventStart, llm.EventDone, llm.EventError:
			return w, false
		case llm.EventRetry:
			w.Type = TypeRetry
			w.Retry = &Retry{Attempt: e.Attempt, DelayMs: e.DelayMs, Error: NewError(e.Err)}
			return w, true
		}
		d := &Delta{Kind: string(e.Type), Index: e.Index, Text: e.Delta}
		if e.Call != nil {
			d.CallID, d.Name = e.Call.ID, e.Call.Name
		}
		w.Delta = d
	case kernel.EventToolStart:
		w.Call = NewCall(ev.Call)
	case kernel.EventToolUpdate:
		if ev.Call == nil || ev.Message == nil {
			return w, false
		}
		if c.shown == nil {
			c.shown = map[string]string{}
		}
		text, prev := ev.Message.Text(), c.shown[ev.Call.ID]
		c.shown[ev.Call.ID] = text
		d := &Delta{Kind: "output"}
		switch {
		case text == prev:
			return w, false
		case strings.HasPrefix(text, prev):
			d.Text = text[len(prev):]
		default:
			d.Text, d.Reset = text, true
		}
		w.Call = &Call{ID: ev.Call.ID, Name: ev.Call.Name}
		w.Delta = d
	case kernel.EventToolEnd:
		if ev.Call != nil {
			delete(c.shown, ev.Call.ID)
		}
		w.Call = NewCall(ev.Call)
		w.Message = NewMessage(ev.Message)
	case kernel.EventTurnEnd:
		w.ToolResults = len(ev.Results)
	case kernel.EventAgentEnd:
		if ev.Outcome == nil {
			return w, false
		}
		w.Outcome = NewOutcome(ev.Outcome)
	case kernel.EventCompaction:
		w.Message = NewMessage(ev.Message)
		if ev.Compaction != nil {
			w.Compaction = &Compaction{FirstKeptID: ev.Compaction.FirstKeptID, TokensBefore: ev.Compaction.TokensBefore}
		}
	case kernel.EventSessionWrite:
		if ev.Write == nil {
			return w, false
		}
		k := ev.Write
		w.Write = &Write{Seq: k.Seq, Kind: string(k.Kind), Intent: k.Intent, IntentKind: string(k.IntentKind), Entries: k.Entries}
	default:
		return w, false
	}
	return w, true
}
