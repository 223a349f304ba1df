package runbytes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/bench/mock"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// chatRequest is what the scenario answerer reads of a Chat Completions request.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// scenarioAnswer returns a mock answerer that answers each Chat Completions request with the
// script model named by the request's "model" field, given the request's conversation.
func scenarioAnswer(models map[string]*script.Model) func(api string, body []byte) (*mock.Turn, error) {
	return func(api string, body []byte) (*mock.Turn, error) {
		if api != "openai" {
			return nil, fmt.Errorf("runbytes: only Chat Completions requests are answered, not %s", api)
		}
		var req chatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("runbytes: decoding the request: %w", err)
		}
		m, ok := models[req.Model]
		if !ok {
			return nil, fmt.Errorf("runbytes: no scenario for model %q", req.Model)
		}
		lreq, err := toLLM(req.Messages)
		if err != nil {
			return nil, err
		}
		msg := m.Stream(context.Background(), lreq, func(llm.Event) {})
		if msg.StopReason == llm.StopError {
			return nil, fmt.Errorf("runbytes: model %s has no answer: %w", req.Model, msg.Err)
		}
		t := &mock.Turn{}
		for _, p := range msg.Content {
			switch p.Type {
			case llm.PartText:
				t.Text += p.Text
			case llm.PartToolCall:
				t.Calls = append(t.Calls, mock.Call{Name: p.Call.Name, Args: json.RawMessage(p.Call.Arguments)})
			}
		}
		if t.Text == "" && len(t.Calls) == 0 {
			t.Text = " "
		}
		return t, nil
	}
}

// toLLM converts a Chat Completions conversation into the script model's request: the user,
// assistant and tool messages with their text and tool calls (all the script model reads).
func toLLM(msgs []chatMessage) (*llm.Request, error) {
	req := &llm.Request{}
	for i, cm := range msgs {
		text, err := contentText(cm.Content)
		if err != nil {
			return nil, fmt.Errorf("runbytes: message %d: %w", i, err)
		}
		switch cm.Role {
		case "system", "developer":
			req.System += text
		case "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.Text(text)}})
		case "assistant":
			m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopEnd}
			if text != "" {
				m.Content = append(m.Content, llm.Text(text))
			}
			for _, c := range cm.ToolCalls {
				m.Content = append(m.Content, llm.Call(c.ID, c.Function.Name, c.Function.Arguments))
				m.StopReason = llm.StopToolUse
			}
			req.Messages = append(req.Messages, m)
		case "tool":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: cm.ToolCallID, Content: []llm.Part{llm.Text(text)}})
		default:
			return nil, fmt.Errorf("runbytes: message %d has role %q", i, cm.Role)
		}
	}
	return req, nil
}

// contentText is a message's text: a JSON string, or the text parts of an array.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor parts: %w", err)
	}
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}
