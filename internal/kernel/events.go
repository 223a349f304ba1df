package kernel

import "github.com/reinhq/rein/internal/llm"

// EventType discriminates [Event].
type EventType string

const (
	EventAgentStart   EventType = "agent_start"
	EventTurnStart    EventType = "turn_start"
	EventMessageStart EventType = "message_start"
	// EventMessageUpdate carries one streaming event of the assistant message (LLM).
	EventMessageUpdate EventType = "message_update"
	EventMessageEnd    EventType = "message_end"
	EventToolStart     EventType = "tool_start"
	EventToolUpdate    EventType = "tool_update"
	EventToolEnd       EventType = "tool_end"
	EventTurnEnd       EventType = "turn_end"
	EventAgentEnd      EventType = "agent_end"
)

// Event is something that happened in a run. Fields are set according to Type.
type Event struct {
	Type EventType
	Turn int
	// Message is set for message_start/_end (user, assistant or tool result) and turn_end (the
	// assistant message); for tool_update/_end it is the (partial) result.
	Message *llm.Message
	// LLM is the provider stream event of a message_update.
	LLM *llm.Event
	// Call is set for tool events.
	Call *llm.ToolCall
	// Results are the tool results of a turn_end, in source order.
	Results []llm.Message
	// Outcome is set for agent_end.
	Outcome *Outcome
}
