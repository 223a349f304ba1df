package cli

import (
	"encoding/json"
	"math"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// WireVersion is the version of the --mode json event schema.
const WireVersion = 1

// wireEvent is one line of --mode json output. Fields are set according to Type; see the
// README's "JSON event stream" section for the schema.
type wireEvent struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	Turn int    `json:"turn,omitempty"`

	// message_start / message_end / tool_end: the message; message_update: the delta.
	Message *wireMessage `json:"message,omitempty"`
	Delta   *wireDelta   `json:"delta,omitempty"`
	// tool_start / tool_update / tool_end.
	Call *wireCall `json:"call,omitempty"`
	// turn_end: the number of tool results of the turn.
	ToolResults int `json:"toolResults,omitempty"`
}

type wireDelta struct {
	Kind    string `json:"kind"` // the provider stream event type, e.g. text_delta, toolcall_start, retry
	Index   int    `json:"index"`
	Text    string `json:"text,omitempty"`
	CallID  string `json:"callId,omitempty"`
	Name    string `json:"name,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	DelayMs int64  `json:"delayMs,omitempty"`
	Error   string `json:"error,omitempty"`
}

type wireCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wirePart struct {
	Type      string    `json:"type"`
	Text      string    `json:"text,omitempty"`
	MIMEType  string    `json:"mimeType,omitempty"`
	Call      *wireCall `json:"call,omitempty"`
	Redacted  bool      `json:"redacted,omitempty"`
	ImageSize int       `json:"imageBytes,omitempty"`
}

type wireUsage struct {
	Input      int     `json:"input"`
	Output     int     `json:"output"`
	CacheRead  int     `json:"cacheRead"`
	CacheWrite int     `json:"cacheWrite"`
	CostUSD    float64 `json:"costUsd"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    []wirePart      `json:"content"`
	Model      string          `json:"model,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Usage      *wireUsage      `json:"usage,omitempty"`
	Error      *wireError      `json:"error,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Details    json.RawMessage `json:"details,omitempty"`
}

type wireError struct {
	Kind    string `json:"kind"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
}

// wireResult is the last line of --mode json output.
type wireResult struct {
	V        int       `json:"v"`
	Type     string    `json:"type"` // "result"
	Status   string    `json:"status"`
	ExitCode int       `json:"exitCode"`
	Turns    int       `json:"turns"`
	Usage    wireUsage `json:"usage"`
	Text     string    `json:"text"`
	Error    string    `json:"error,omitempty"`
	Provider string    `json:"provider,omitempty"`
	Model    string    `json:"model,omitempty"`
	Session  string    `json:"session,omitempty"`
}

func toWireUsage(u llm.Usage) wireUsage {
	// Rounded to a nano-dollar so that float noise does not reach readers.
	return wireUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
		CostUSD: math.Round(u.Cost.Total*1e9) / 1e9}
}

func toWireCall(c *llm.ToolCall) *wireCall {
	if c == nil {
		return nil
	}
	return &wireCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
}

func toWireMessage(m *llm.Message) *wireMessage {
	if m == nil {
		return nil
	}
	w := &wireMessage{Role: string(m.Role), Model: m.Model, StopReason: string(m.StopReason),
		ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError, Details: m.Details, Content: []wirePart{}}
	for _, p := range m.Content {
		wp := wirePart{Type: string(p.Type), Text: p.Text, MIMEType: p.MIMEType, Call: toWireCall(p.Call), Redacted: p.Redacted}
		if p.Type == llm.PartImage {
			wp.ImageSize = len(p.Data)
		}
		w.Content = append(w.Content, wp)
	}
	if m.Usage != nil {
		u := toWireUsage(*m.Usage)
		w.Usage = &u
	}
	if m.Err != nil {
		w.Error = &wireError{Kind: string(m.Err.Kind), Status: m.Err.Status, Message: m.Err.Message}
	}
	return w
}

// toWire converts a kernel event; ok is false for events the stream does not carry.
func toWire(ev kernel.Event) (wireEvent, bool) {
	w := wireEvent{V: WireVersion, Type: string(ev.Type), Turn: ev.Turn}
	switch ev.Type {
	case kernel.EventAgentStart, kernel.EventTurnStart:
	case kernel.EventMessageStart, kernel.EventMessageEnd:
		w.Message = toWireMessage(ev.Message)
	case kernel.EventMessageUpdate:
		e := ev.LLM
		d := &wireDelta{Kind: string(e.Type), Index: e.Index, Text: e.Delta, Attempt: e.Attempt, DelayMs: e.DelayMs}
		if e.Call != nil {
			d.CallID, d.Name = e.Call.ID, e.Call.Name
		}
		if e.Err != nil {
			d.Error = e.Err.Error()
		}
		w.Delta = d
	case kernel.EventToolStart:
		w.Call = toWireCall(ev.Call)
	case kernel.EventToolUpdate, kernel.EventToolEnd:
		w.Call = toWireCall(ev.Call)
		w.Message = toWireMessage(ev.Message)
	case kernel.EventTurnEnd:
		w.ToolResults = len(ev.Results)
	case kernel.EventCompaction:
		w.Message = toWireMessage(ev.Message)
	default: // agent_end: summarized by the result record
		return w, false
	}
	return w, true
}
