package kernel

import "github.com/reinhq/rein/internal/llm"

// EventType discriminates [Event].
type EventType string

const (
	EventAgentStart   EventType = "agent_start"
	EventTurnStart    EventType = "turn_start"
	EventMessageStart EventType = "message_start"
	// EventMessageUpdate carries one streaming event of the assistant message (LLM): a delta
	// of one content block, never the message so far. A failed attempt that will be retried
	// arrives as an update whose LLM.Type is [llm.EventRetry]: observers discard what they
	// showed of the attempt.
	EventMessageUpdate EventType = "message_update"
	EventMessageEnd    EventType = "message_end"
	EventToolStart     EventType = "tool_start"
	EventToolUpdate    EventType = "tool_update"
	EventToolEnd       EventType = "tool_end"
	EventTurnEnd       EventType = "turn_end"
	EventAgentEnd      EventType = "agent_end"
	// EventSessionWrite follows every intent, attempt and settlement the Recorder made durable, with
	// Write saying what was written.
	EventSessionWrite EventType = "session_write"
)

// Event is something that happened in a run. Fields are set according to Type.
type Event struct {
	Type EventType
	Turn int
	// Message is set for message_start/_end (user, assistant or tool result), turn_end (the
	// assistant message) and compaction (the summary); for tool_update/_end it is the result
	// (a tool_update's is the accumulated partial result the tool reported).
	Message *llm.Message
	// LLM is the provider stream event of a message_update.
	LLM *llm.Event
	// Call is set for tool events.
	Call *llm.ToolCall
	// Results are the tool results of a turn_end, in source order.
	Results []llm.Message
	// Outcome is set for agent_end.
	Outcome *Outcome
	// Compaction is set for compaction: what the summary replaces.
	Compaction *CompactionInfo
	// Write is set for session_write.
	Write *Write
}

// WriteKind says what a session_write recorded.
type WriteKind string

const (
	WriteIntent     WriteKind = "intent"
	WriteSettlement WriteKind = "settlement"
	// WriteAttempt: a retry of a model call, recorded before it is sent ([AttemptRecorder]).
	WriteAttempt WriteKind = "attempt"
)

// Write describes one durable Recorder call, for a session_write event.
type Write struct {
	Kind WriteKind
	// Intent is the intent's id: the intent written (or retried, for an attempt), or the intent
	// a settlement settles ("" for a settlement of no intent: a prompt, a queued message, a
	// result decided in preflight).
	Intent string
	// IntentKind is the kind of a written intent (model_call for an attempt).
	IntentKind IntentKind
	// Entries are the ids of a settlement's entries, in order (none for a settlement that
	// closes its intent without a result).
	Entries []string
	// Seq is the recorder's position just after the write, when it reports one
	// ([Positioner]); 0 otherwise.
	Seq int64
}

// Positioner is an optional capability of a [Recorder]: the sequence number of its last
// record (a session ledger's head). The kernel puts it in session_write events. A Recorder
// that wraps another (telemetry, a test probe) need not forward it: the kernel also looks
// through Unwrap() Recorder.
type Positioner interface {
	Head() (seq int64, hash string)
}

// position returns the recorder's position, looking through wrappers; 0 when none reports
// one.
func position(rec Recorder) int64 {
	if p, ok := capability[Positioner](rec); ok {
		seq, _ := p.Head()
		return seq
	}
	return 0
}

// capability finds an optional capability T of a recorder, looking through wrappers that
// implement Unwrap() Recorder (telemetry, test probes) so none of them has to forward it.
func capability[T any](rec Recorder) (T, bool) {
	var zero T
	for range 16 { // a bound against a wrapper that unwraps to itself
		if c, ok := rec.(T); ok {
			return c, true
		}
		u, ok := rec.(interface{ Unwrap() Recorder })
		if !ok {
			return zero, false
		}
		if rec = u.Unwrap(); rec == nil {
			return zero, false
		}
	}
	return zero, false
}

// written emits the session_write event of a successful Recorder call.
func (r *run) written(w Write) {
	w.Seq = position(r.cfg.Recorder)
	r.cfg.Observe(Event{Type: EventSessionWrite, Turn: r.out.Turns, Write: &w})
}
