package llm

import (
	"encoding/json"
	"strings"
)

// Role says who authored a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool result
)

// PartType discriminates [Part].
type PartType string

const (
	PartText     PartType = "text"
	PartThinking PartType = "thinking"
	PartImage    PartType = "image"
	PartToolCall PartType = "toolCall"
)

// StopReason says why an assistant message ended.
type StopReason string

const (
	StopEnd     StopReason = "stop"    // the model finished its turn
	StopLength  StopReason = "length"  // the output token limit was hit
	StopToolUse StopReason = "toolUse" // the model wants tool results
	StopError   StopReason = "error"   // the request or stream failed; see Message.Err
	StopAborted StopReason = "aborted" // the caller's context was cancelled
)

// Part is one block of message content. Type says which fields are meaningful.
type Part struct {
	Type PartType `json:"type"`
	// Text holds the text of a text part and the reasoning of a thinking part.
	Text string `json:"text,omitempty"`
	// Signature is the provider's opaque token for a thinking or text block; for a redacted
	// thinking block it holds the encrypted payload.
	Signature string `json:"signature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
	// MIMEType and Data describe an image.
	MIMEType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data,omitempty"`
	// Call is set for a tool-call part.
	Call *ToolCall `json:"call,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	// ID is unique among the calls of a session: the provider's id, or one rein assigned
	// because the provider's was empty, malformed, repeated in its message or already used
	// earlier in the session (see package kernel).
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the argument text exactly as the model produced it. It is usually a JSON
	// object but may be truncated or invalid; callers validate it strictly before use.
	Arguments string `json:"arguments"`
	// ProviderID is the id the provider sent, set only when rein replaced it with ID; the
	// provider is sent ID, in the call and in its result.
	ProviderID string `json:"providerId,omitempty"`
}

// Text returns a text part.
func Text(s string) Part { return Part{Type: PartText, Text: s} }

// Thinking returns a thinking part.
func Thinking(s string) Part { return Part{Type: PartThinking, Text: s} }

// Call returns a tool-call part.
func Call(id, name, args string) Part {
	return Part{Type: PartToolCall, Call: &ToolCall{ID: id, Name: name, Arguments: args}}
}

// Message is one entry of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content []Part `json:"content"`

	// Assistant messages: where they came from and how they ended.
	Provider   string     `json:"provider,omitempty"`
	API        string     `json:"api,omitempty"`
	Model      string     `json:"model,omitempty"`
	ResponseID string     `json:"responseId,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Err        *Error     `json:"error,omitempty"`
	// FinishReason is the provider's own word for how the answer ended (Anthropic's
	// stop_reason, Chat Completions' finish_reason, the Responses API's status or incomplete
	// reason), for telemetry; StopReason is what rein makes of it. Not recorded.
	FinishReason string `json:"-"`

	// Tool results: which call they answer.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
	// Details is structured, tool-specific data for UIs and logs; it is never sent to a model.
	Details json.RawMessage `json:"details,omitempty"`

	// Time is the creation time in Unix milliseconds.
	Time int64 `json:"ts,omitempty"`

	// ID is the id the message is recorded under in a session, when it is. It is not part of
	// any wire or ledger encoding (the ledger keeps it in the record envelope).
	ID string `json:"-"`
}

// UserText returns a user message holding one text part.
func UserText(s string) Message { return Message{Role: RoleUser, Content: []Part{Text(s)}} }

// ToolResultText returns a tool result message holding one text part.
func ToolResultText(call *ToolCall, text string, isError bool) Message {
	return Message{Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name,
		Content: []Part{Text(text)}, IsError: isError}
}

// Text concatenates the text parts of m.
func (m *Message) Text() string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the tool calls of m in source order.
func (m *Message) ToolCalls() []*ToolCall {
	var calls []*ToolCall
	for _, p := range m.Content {
		if p.Type == PartToolCall && p.Call != nil {
			calls = append(calls, p.Call)
		}
	}
	return calls
}

// Failed reports whether m is an assistant message that ended in an error or abort.
func (m *Message) Failed() bool {
	return m.Role == RoleAssistant && (m.StopReason == StopError || m.StopReason == StopAborted)
}
