package llm

import (
	"context"
	"encoding/json"
)

// Model streams one assistant turn. See the package documentation for the contract.
type Model interface {
	Stream(ctx context.Context, req *Request, emit func(Event)) *Message
}

// ModelFunc adapts a function to [Model].
type ModelFunc func(ctx context.Context, req *Request, emit func(Event)) *Message

// Stream calls f.
func (f ModelFunc) Stream(ctx context.Context, req *Request, emit func(Event)) *Message {
	return f(ctx, req, emit)
}

// Request is everything one model call sends.
type Request struct {
	System   string     `json:"system,omitempty"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
	// MaxTokens caps the output; zero lets the adapter pick the model's default.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Thinking asks for reasoning at this level; "" or "off" asks for none.
	Thinking ThinkingLevel `json:"thinking,omitempty"`
	// SessionID lets providers that support it route requests for prompt-cache affinity.
	SessionID string `json:"sessionId,omitempty"`
	// Lineage, when set, vouches that the history only grew between the requests sent with
	// it: of any two such requests, the Messages of the shorter are the first Messages of the
	// longer, unmodified (no message, part or call of them replaced or edited in place). An
	// adapter may then keep what it derived from the messages of an earlier request of the
	// lineage (their encoding, Heal's check) without reading them again, so that a request
	// costs what its new messages cost. Nil vouches for nothing: adapters compare. A caller
	// that cannot tell whether a message changed (a hook may have edited one) sends nil and
	// starts a new lineage afterwards.
	Lineage *Lineage `json:"-"`
}

// Lineage names a history that only grows ([Request.Lineage]). Lineages are compared by
// identity: make each with [NewLineage].
type Lineage struct{ _ byte } // not empty: distinct lineages have distinct addresses

// NewLineage returns a new lineage, distinct from every other.
func NewLineage() *Lineage { return new(Lineage) }

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// ThinkingLevel is a provider-neutral reasoning effort.
type ThinkingLevel string

const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
)

// ThinkingBudget returns a token budget for providers that take one.
func (l ThinkingLevel) ThinkingBudget() int {
	switch l {
	case ThinkingMinimal:
		return 1024
	case ThinkingLow:
		return 2048
	case ThinkingMedium:
		return 8192
	case ThinkingHigh:
		return 16384
	}
	return 0
}

// EventType discriminates [Event].
type EventType string

const (
	EventStart         EventType = "start"
	EventTextStart     EventType = "text_start"
	EventTextDelta     EventType = "text_delta"
	EventTextEnd       EventType = "text_end"
	EventThinkingStart EventType = "thinking_start"
	EventThinkingDelta EventType = "thinking_delta"
	EventThinkingEnd   EventType = "thinking_end"
	EventToolCallStart EventType = "toolcall_start"
	EventToolCallDelta EventType = "toolcall_delta"
	EventToolCallEnd   EventType = "toolcall_end"
	// EventRetry says the attempt so far failed and will be retried after Delay: observers
	// should discard what they showed of it.
	EventRetry EventType = "retry"
	EventDone  EventType = "done"
	EventError EventType = "error"
)

// Event is one step of a streaming response.
type Event struct {
	Type EventType
	// Index is the content index the event refers to (for block events).
	Index int
	// Delta is the text added by a *_delta event.
	Delta string
	// Call is the tool call of a toolcall_start/_end event (at start, with ID and Name only).
	Call *ToolCall
	// Message is the final message of done/error events.
	Message *Message
	// Err, Attempt and DelayMs describe a retry event.
	Err     *Error
	Attempt int
	DelayMs int64
}
