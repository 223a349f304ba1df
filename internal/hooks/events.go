package hooks

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Point names a place in the agent loop where hooks run.
type Point string

// The hook points, in the order a run meets them.
const (
	PointSessionStart          Point = "session_start"
	PointBeforeAgentStart      Point = "before_agent_start"
	PointContext               Point = "context"
	PointBeforeProviderRequest Point = "before_provider_request"
	PointBeforeTool            Point = "before_tool"
	PointAfterTool             Point = "after_tool"
	PointBeforeCompact         Point = "before_compact"
	PointTurnEnd               Point = "turn_end"
	PointStop                  Point = "stop"
	PointSessionEnd            Point = "session_end"
)

// Points lists every point in the order a run meets them.
var Points = []Point{PointSessionStart, PointBeforeAgentStart, PointContext, PointBeforeProviderRequest,
	PointBeforeTool, PointAfterTool, PointBeforeCompact, PointTurnEnd, PointStop, PointSessionEnd}

// Event is the payload of one point. Its implementations are the pointer types of this
// package; a hook reads the payload and changes the run by assigning to its fields. Slices and
// messages a payload holds must not be modified in place: assign a new one.
type Event interface {
	// Point returns the point the payload belongs to.
	Point() Point
	// outcome says what the hook that turned before into the receiver decided.
	outcome(before Event) Outcome
}

// SessionStart is the payload of session_start: the agent's first run (or compaction) is about
// to start.
type SessionStart struct {
	// SessionID is the kernel's session id ("" for a run that is not recorded in a session).
	SessionID string
	// System is the system prompt of the agent's runs; a hook may replace or extend it.
	System string
}

// BeforeAgentStart is the payload of before_agent_start: a run is about to start.
type BeforeAgentStart struct {
	SessionID string
	// Prompt is the user's message, not yet recorded; nil when the run continues pending work
	// (kernel Agent.Continue), in which case it stays nil. A hook may replace it.
	Prompt *llm.Message
	// System is the system prompt of this run; a hook may replace or extend it.
	System string
	// Block, when set, refuses the prompt: nothing is recorded and the run ends blocked with
	// this error.
	Block error
}

// Context is the payload of context: the messages of the next model request.
type Context struct {
	Turn int
	// Messages are the messages to send; a hook may assign a new list.
	Messages []llm.Message
}

// BeforeProviderRequest is the payload of before_provider_request.
type BeforeProviderRequest struct {
	Turn int
	// Request is the request about to be sent; a hook may assign a new one (copy, then change
	// the copy).
	Request *llm.Request
}

// BeforeTool is the payload of before_tool: a validated call the permission gate allowed.
type BeforeTool struct {
	Turn int
	// Call is the call as the model made it.
	Call *llm.ToolCall
	Spec tool.Spec
	// Args are the validated arguments; a hook may assign new ones, which are validated again
	// against Spec's schema before the tool runs.
	Args json.RawMessage
	// Block, when set, refuses the call: its text is the call's error result (the model sees
	// it) and the tool never runs. A Block matching kernel.ErrNeedsApproval ends an otherwise
	// completed run blocked, as a gate refusal does.
	Block error
}

// AfterTool is the payload of after_tool: a tool ran (it is not called for calls that never
// ran: unknown tool, invalid arguments, refused, truncated, aborted before they started).
type AfterTool struct {
	Turn int
	Call *llm.ToolCall
	// Args are the arguments the tool ran with.
	Args json.RawMessage
	// Result is the tool's result; a hook may assign a new one. The kernel keeps the call's id
	// and tool name on whatever is assigned.
	Result *llm.Message
}

// BeforeCompact is the payload of before_compact: the context is about to be compacted.
type BeforeCompact struct {
	// Turn is the turn before which an automatic compaction runs; 0 for a manual one.
	Turn   int
	Manual bool
	// Instructions are the user's focus for the summary (manual compaction), if any.
	Instructions string
	// Messages are the context to compact.
	Messages []llm.Message
	// Cancel, when set, cancels the compaction: nothing is recorded and the context stays as
	// it was (a run goes on; a manual compaction fails with this reason).
	Cancel error
	// Summary, when set, is the summary to record instead of asking the compactor's model: a
	// user message that replaces Messages[:FirstKept]. FirstKept 0 lets the compactor choose
	// the cut when it can (kernel.Cutter); TokensBefore is recorded as given.
	Summary      *llm.Message
	FirstKept    int
	TokensBefore int
}

// TurnEnd is the payload of turn_end: a turn ended and its results are recorded. Results are in
// source order; empty when the model made no tool calls.
type TurnEnd struct {
	Turn    int
	Message *llm.Message
	Results []llm.Message
}

// Stop is the payload of stop: the model answered without tool calls, so the run would
// complete.
type Stop struct {
	Turn int
	// Message is the model's final message.
	Message *llm.Message
	// Active says this run already went on once because of a stop hook; a hook should check it
	// to avoid keeping the run going forever.
	Active bool
	// Continue, when set, makes the run go on: it is recorded as a user message and the model
	// is asked again.
	Continue string
}

// SessionEnd is the payload of session_end: the agent is done.
type SessionEnd struct {
	SessionID string
	// Reason says why: EndExit for a process that is done with the session.
	Reason string
}

// EndExit is the SessionEnd reason of an agent whose process is done with it.
const EndExit = "exit"

func (*SessionStart) Point() Point          { return PointSessionStart }
func (*BeforeAgentStart) Point() Point      { return PointBeforeAgentStart }
func (*Context) Point() Point               { return PointContext }
func (*BeforeProviderRequest) Point() Point { return PointBeforeProviderRequest }
func (*BeforeTool) Point() Point            { return PointBeforeTool }
func (*AfterTool) Point() Point             { return PointAfterTool }
func (*BeforeCompact) Point() Point         { return PointBeforeCompact }
func (*TurnEnd) Point() Point               { return PointTurnEnd }
func (*Stop) Point() Point                  { return PointStop }
func (*SessionEnd) Point() Point            { return PointSessionEnd }

func (e *SessionStart) outcome(b Event) Outcome {
	return changedIf(e.System != b.(*SessionStart).System)
}

func (e *BeforeAgentStart) outcome(b Event) Outcome {
	p := b.(*BeforeAgentStart)
	if e.Block != nil {
		return OutcomeBlocked
	}
	return changedIf(e.Prompt != p.Prompt || e.System != p.System)
}

func (e *Context) outcome(b Event) Outcome {
	return changedIf(!sameSlice(e.Messages, b.(*Context).Messages))
}

func (e *BeforeProviderRequest) outcome(b Event) Outcome {
	return changedIf(e.Request != b.(*BeforeProviderRequest).Request)
}

func (e *BeforeTool) outcome(b Event) Outcome {
	if e.Block != nil {
		return OutcomeBlocked
	}
	return changedIf(!bytes.Equal(e.Args, b.(*BeforeTool).Args))
}

func (e *AfterTool) outcome(b Event) Outcome {
	return changedIf(e.Result != b.(*AfterTool).Result)
}

func (e *BeforeCompact) outcome(Event) Outcome {
	switch {
	case e.Cancel != nil:
		return OutcomeBlocked
	case e.Summary != nil:
		return OutcomeChanged
	}
	return OutcomeOK
}

func (*TurnEnd) outcome(Event) Outcome { return OutcomeOK }

func (e *Stop) outcome(Event) Outcome {
	if e.Continue != "" {
		return OutcomeBlocked
	}
	return OutcomeOK
}

func (*SessionEnd) outcome(Event) Outcome { return OutcomeOK }

func changedIf(b bool) Outcome {
	if b {
		return OutcomeChanged
	}
	return OutcomeOK
}

// sameSlice reports whether a and b are the same slice (not merely equal contents).
func sameSlice(a, b []llm.Message) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// ContextHook may replace the message list sent to the model; kernel.ContextHook is this
// interface, so one implementation serves both Config.ContextHooks and a [Registry]
// ([Registry.ContextHook]). It must not modify msgs in place.
type ContextHook interface {
	Context(ctx context.Context, msgs []llm.Message) ([]llm.Message, error)
}
