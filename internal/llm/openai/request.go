package openai

import (
	"encoding/json"
	"strings"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
)

// body is a Responses API request. Nothing is stored server side (store false): the history
// is sent in full, reasoning as encrypted items.
type body struct {
	Model           string         `json:"model"`
	Input           []any          `json:"input"`
	Instructions    string         `json:"instructions,omitempty"`
	Store           bool           `json:"store"`
	Stream          bool           `json:"stream"`
	Tools           []functionTool `json:"tools,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Reasoning       *reasoning     `json:"reasoning,omitempty"`
	Include         []string       `json:"include,omitempty"`
	PromptCacheKey  string         `json:"prompt_cache_key,omitempty"`
}

type functionTool struct {
	Type        string          `json:"type"` // function
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type reasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// message is an input message: content is a string or a list of content parts.
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type inputText struct {
	Type string `json:"type"` // input_text
	Text string `json:"text"`
}

type inputImage struct {
	Type     string `json:"type"` // input_image
	Detail   string `json:"detail"`
	ImageURL string `json:"image_url"`
}

type functionCall struct {
	Type      string `json:"type"` // function_call
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"` // function_call_output
	CallID string `json:"call_id"`
	Output any    `json:"output"` // a string, or a list of content parts
}

// encodeRequest encodes a request as a Responses API body.
func encodeRequest(cfg *Config, req *llm.Request) ([]byte, *llm.Error) {
	p := body{Model: cfg.Model, Input: inputItems(cfg.Model, req.Messages), Stream: true,
		Instructions: req.System, PromptCacheKey: req.SessionID}
	for _, t := range req.Tools {
		schema, err := oaisdk.ToolSchema(t)
		if err != nil {
			return nil, err
		}
		p.Tools = append(p.Tools, functionTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	p.MaxOutputTokens = req.MaxTokens
	if p.MaxOutputTokens <= 0 {
		p.MaxOutputTokens = max(cfg.MaxTokens, 0)
	}
	if req.Thinking != "" && req.Thinking != llm.ThinkingOff {
		p.Reasoning = &reasoning{Effort: string(req.Thinking), Summary: "auto"}
		p.Include = []string{"reasoning.encrypted_content"}
	}
	b, err := json.Marshal(&p)
	if err != nil { // only a bug can get here: every value is a string, number or valid JSON
		return nil, &llm.Error{Kind: llm.KindInvalid, Message: "encoding the request: " + err.Error()}
	}
	return b, nil
}

// inputItems maps the healed history onto input items. See the package documentation for what
// is replayed of earlier assistant messages.
func inputItems(model string, history []llm.Message) []any {
	items := []any{}
	for _, m := range llm.Heal(history) {
		switch m.Role {
		case llm.RoleUser:
			items = append(items, userItem(m.Content))
		case llm.RoleAssistant:
			items = append(items, assistantItems(model, &m)...)
		case llm.RoleTool:
			items = append(items, toolOutput(&m))
		}
	}
	return items
}

// contentList returns the text and image parts of parts as input content, and whether there
// is an image among them.
func contentList(parts []llm.Part) (list []any, texts []string, images bool) {
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			texts = append(texts, p.Text)
			list = append(list, inputText{Type: "input_text", Text: p.Text})
		case llm.PartImage:
			images = true
			list = append(list, inputImage{Type: "input_image", Detail: "auto", ImageURL: oaisdk.DataURL(p)})
		}
	}
	return list, texts, images
}

func userItem(parts []llm.Part) message {
	list, texts, images := contentList(parts)
	if !images {
		return message{Role: "user", Content: strings.Join(texts, "\n")}
	}
	return message{Role: "user", Content: list}
}

// storedReasoning is the part of a reasoning output item kept in a thinking part's Signature.
type storedReasoning struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	EncryptedContent string `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// replayableReasoning parses a thinking part's signature; ok is false when it cannot be sent
// back (not a reasoning item, or no encrypted content).
func replayableReasoning(sig string) (r storedReasoning, ok bool) {
	if sig == "" || json.Unmarshal([]byte(sig), &r) != nil {
		return r, false
	}
	return r, r.Type == "reasoning" && r.ID != "" && r.EncryptedContent != ""
}

// assistantItems maps an assistant message. Its reasoning is replayed, with the output item ids
// of its text and tool calls, only when the message came from this very model through the
// Responses API and carries encrypted reasoning; otherwise thinking is dropped and text and
// calls go back without item ids (plain input items, always accepted).
func assistantItems(model string, m *llm.Message) []any {
	replay := false
	if m.Provider == llm.ProviderOpenAI && m.API == llm.APIOpenAIResponses && m.Model == model {
		for _, p := range m.Content {
			if _, ok := replayableReasoning(p.Signature); ok && p.Type == llm.PartThinking {
				replay = true
			}
		}
	}
	var items []any
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartThinking:
			r, ok := replayableReasoning(p.Signature)
			if !replay || !ok {
				continue
			}
			summary := []map[string]string{}
			for _, s := range r.Summary {
				summary = append(summary, map[string]string{"type": "summary_text", "text": s.Text})
			}
			items = append(items, map[string]any{"type": "reasoning", "id": r.ID,
				"summary": summary, "encrypted_content": r.EncryptedContent})
		case llm.PartText:
			if p.Text == "" {
				continue
			}
			if replay && p.Signature != "" {
				items = append(items, map[string]any{"type": "message", "role": "assistant", "id": p.Signature,
					"status": "completed", "content": []map[string]any{{"type": "output_text", "text": p.Text, "annotations": []any{}}}})
				continue
			}
			items = append(items, message{Role: "assistant", Content: p.Text})
		case llm.PartToolCall:
			if p.Call == nil {
				continue
			}
			fc := functionCall{Type: "function_call", CallID: p.Call.ID, Name: p.Call.Name,
				Arguments: oaisdk.HistoryArguments(p.Call.Arguments)}
			if replay {
				fc.ID = p.Signature
			}
			items = append(items, fc)
		}
	}
	return items
}

// toolOutput maps a tool result onto a function_call_output: its text, or a list of text and
// images when it has images.
func toolOutput(m *llm.Message) functionCallOutput {
	out := functionCallOutput{Type: "function_call_output", CallID: m.ToolCallID}
	list, texts, images := contentList(m.Content)
	if images {
		out.Output = list
	} else {
		out.Output = strings.Join(texts, "\n")
	}
	return out
}
