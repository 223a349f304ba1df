package wire

import (
	"encoding/json"
	"math"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// Version is the version of the event schema.
//
// 2: agent_end, session_write, compaction details, retry and queue_update events; tool_update
// carries an output delta instead of the partial result; messages carry their id and time.
const Version = 2

// Types of the wire's own lines (the others are kernel event types).
const (
	TypeRetry       = "retry"
	TypeQueueUpdate = "queue_update"
	TypeResult      = "result"
)

// Event is one line of the event stream. Fields are set according to Type; see the README's
// "JSON event stream" section.
type Event struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	Turn int    `json:"turn,omitempty"`

	// message_start, message_end, tool_end, compaction: the whole message (an assistant
	// message_start holds no content yet).
	Message *Message `json:"message,omitempty"`
	// message_update, tool_update: what was added.
	Delta *Delta `json:"delta,omitempty"`
	// tool_start, tool_end: the call; tool_update: its id and name only.
	Call *Call `json:"call,omitempty"`
	// turn_end: the number of tool results of the turn.
	ToolResults int `json:"toolResults,omitempty"`
	// retry: the failed attempt.
	Retry *Retry `json:"retry,omitempty"`
	// compaction: what the summary replaced.
	Compaction *Compaction `json:"compaction,omitempty"`
	// session_write: the durable write.
	Write *Write `json:"write,omitempty"`
	// agent_end: how the run ended.
	Outcome *Outcome `json:"outcome,omitempty"`
	// queue_update: the messages waiting for the running agent.
	Queue *Queue `json:"queue,omitempty"`
}

// Delta is a streaming increment.
type Delta struct {
	// Kind is the provider stream event (text_start, text_delta, text_end, thinking_*,
	// toolcall_start, toolcall_delta, toolcall_end) or, in a tool_update, "output".
	Kind  string `json:"kind"`
	Index int    `json:"index,omitempty"`
	Text  string `json:"text,omitempty"`
	// CallID and Name identify the tool call of a toolcall_* delta.
	CallID string `json:"callId,omitempty"`
	Name   string `json:"name,omitempty"`
	// Reset says Text replaces what was shown of the tool's output instead of extending it.
	Reset bool `json:"reset,omitempty"`
}

// Call is a tool call.
type Call struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

// Part is one content part of a message.
type Part struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	MIMEType  string `json:"mimeType,omitempty"`
	Call      *Call  `json:"call,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
	ImageSize int    `json:"imageBytes,omitempty"`
}

// Usage is token usage and its cost.
type Usage struct {
	Input      int     `json:"input"`
	Output     int     `json:"output"`
	CacheRead  int     `json:"cacheRead"`
	CacheWrite int     `json:"cacheWrite"`
	CostUSD    float64 `json:"costUsd"`
}

// Message is a user, assistant or tool-result message.
type Message struct {
	// ID is the entry id the message is recorded under (set once it is recorded).
	ID         string          `json:"id,omitempty"`
	Role       string          `json:"role"`
	Content    []Part          `json:"content"`
	Model      string          `json:"model,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Usage      *Usage          `json:"usage,omitempty"`
	Error      *Error          `json:"error,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Details    json.RawMessage `json:"details,omitempty"`
	// Time is the creation time in Unix milliseconds.
	Time int64 `json:"ts,omitempty"`
}

// Error is a provider error.
type Error struct {
	Kind    string `json:"kind"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
}

// Retry describes a failed attempt that will be retried after DelayMs.
type Retry struct {
	Attempt int    `json:"attempt"`
	DelayMs int64  `json:"delayMs"`
	Error   *Error `json:"error,omitempty"`
}

// Compaction says what a compaction summary replaced.
type Compaction struct {
	FirstKeptID  string `json:"firstKeptId"`
	TokensBefore int    `json:"tokensBefore"`
}

// Write is a durable session write.
type Write struct {
	// Seq is the session ledger's sequence number after the write (0 without a session).
	Seq  int64  `json:"seq,omitempty"`
	Kind string `json:"kind"` // intent, attempt (a model call's retry) or settlement
	// Intent is the intent written or settled; IntentKind (intents) is model_call, tool_call
	// or compaction.
	Intent     string `json:"intent,omitempty"`
	IntentKind string `json:"intentKind,omitempty"`
	// Entries are the ids a settlement recorded.
	Entries []string `json:"entries,omitempty"`
}

// Outcome is how a run ended (agent_end).
type Outcome struct {
	Status string `json:"status"` // completed, failed, budget, aborted, blocked
	Turns  int    `json:"turns"`
	Usage  Usage  `json:"usage"`
	Error  string `json:"error,omitempty"`
}

// Queue lists the texts of the messages waiting for the running agent.
type Queue struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// Result is the last line of `--mode json`.
type Result struct {
	V        int    `json:"v"`
	Type     string `json:"type"` // "result"
	Status   string `json:"status"`
	ExitCode int    `json:"exitCode"`
	Turns    int    `json:"turns"`
	Usage    Usage  `json:"usage"`
	Text     string `json:"text"`
	Error    string `json:"error,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Session  string `json:"session,omitempty"`
}

// NewUsage converts usage; the cost is rounded to a nano-dollar so that float noise does not
// reach readers.
func NewUsage(u llm.Usage) Usage {
	return Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
		CostUSD: math.Round(u.Cost.Total*1e9) / 1e9}
}

// NewCall converts a tool call (nil for nil).
func NewCall(c *llm.ToolCall) *Call {
	if c == nil {
		return nil
	}
	return &Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
}

// NewError converts a provider error (nil for nil).
func NewError(e *llm.Error) *Error {
	if e == nil {
		return nil
	}
	return &Error{Kind: string(e.Kind), Status: e.Status, Message: e.Message}
}

// NewMessage converts a message (nil for nil). Image data is left out; its size stays.
func NewMessage(m *llm.Message) *Message {
	if m == nil {
		return nil
	}
	w := &Message{ID: m.ID, Role: string(m.Role), Model: m.Model, StopReason: string(m.StopReason),
		ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError, Details: m.Details,
		Time: m.Time, Content: []Part{}, Error: NewError(m.Err)}
	for _, p := range m.Content {
		wp := Part{Type: string(p.Type), Text: p.Text, MIMEType: p.MIMEType, Call: NewCall(p.Call), Redacted: p.Redacted}
		if p.Type == llm.PartImage {
			wp.ImageSize = len(p.Data)
		}
		w.Content = append(w.Content, wp)
	}
	if m.Usage != nil {
		u := NewUsage(*m.Usage)
		w.Usage = &u
	}
	return w
}

// NewOutcome converts a run's outcome.
func NewOutcome(o *kernel.Outcome) *Outcome {
	w := &Outcome{Status: string(o.Status), Turns: o.Turns, Usage: NewUsage(o.Usage)}
	if o.Err != nil {
		w.Error = o.Err.Error()
	}
	return w
}

// NewQueue lists the texts of queued messages.
func NewQueue(steering, followUp []llm.Message) *Queue {
	q := &Queue{Steering: []string{}, FollowUp: []string{}}
	for i := range steering {
		q.Steering = append(q.Steering, steering[i].Text())
	}
	for i := range followUp {
		q.FollowUp = append(q.FollowUp, followUp[i].Text())
	}
	return q
}
