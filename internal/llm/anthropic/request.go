package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/reinhq/rein/internal/llm"
)

// Thinking budget limits of the Messages API: budget_tokens is at least minThinkingBudget and
// below max_tokens; we keep at least minVisibleOutput tokens for the answer itself.
const (
	minThinkingBudget = 1024
	minVisibleOutput  = 1024
)

// request is the body of a Messages API request.
type request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Messages  []message `json:"messages"`
	System    []content `json:"system,omitempty"`
	Tools     []tool    `json:"tools,omitempty"`
	Thinking  *thinking `json:"thinking,omitempty"`
	Stream    bool      `json:"stream"`
}

type message struct {
	Role    string    `json:"role"`
	Content []content `json:"content"`
}

// content is one content block of any type; the fields a type does not have stay empty.
type content struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// thinking (thinking is sent even when empty) and redacted_thinking
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`
	// image
	Source *imageSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string    `json:"tool_use_id,omitempty"`
	IsError   bool      `json:"is_error,omitempty"`
	Content   []content `json:"content,omitempty"`

	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"` // base64
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type cacheControl struct {
	Type string `json:"type"` // ephemeral
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type thinking struct {
	Type         string `json:"type"` // enabled
	BudgetTokens int    `json:"budget_tokens"`
}

// ephemeral is the cache breakpoint of prompt caching.
var ephemeral = &cacheControl{Type: "ephemeral"}

// body builds the Messages API request for req.
func (m *model) body(req *llm.Request) *request {
	maxTokens, budget := m.limits(req)
	p := &request{
		Model:     m.cfg.Model,
		MaxTokens: maxTokens,
		Messages:  m.messages(llm.Heal(req.Messages)),
		Stream:    true,
	}
	if budget > 0 {
		p.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
	}
	if req.System != "" {
		p.System = []content{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: inputSchema(t.Schema)})
	}
	return p
}

// limits returns max_tokens and the thinking budget (0: thinking off) for req.
func (m *model) limits(req *llm.Request) (maxTokens, budget int) {
	maxTokens = req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.cfg.MaxTokens
	}
	if maxTokens <= 0 {
		maxTokens = llm.DefaultMaxOutput
	}
	budget = req.Thinking.ThinkingBudget()
	if budget <= 0 {
		return maxTokens, 0
	}
	// Thinking tokens count against max_tokens: add the budget on top of the visible output,
	// within the model's limit, and shrink the budget when the limit leaves too little room.
	total := maxTokens + budget
	if m.cfg.MaxTokens > 0 && total > m.cfg.MaxTokens {
		total = m.cfg.MaxTokens
	}
	if total-budget < minVisibleOutput {
		budget = total - minVisibleOutput
	}
	if budget < minThinkingBudget {
		return maxTokens, 0
	}
	return total, budget
}

// inputSchema sends a tool's JSON schema verbatim; a missing or malformed one becomes the
// schema of an object without declared properties.
func inputSchema(schema json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(schema)) == 0 || json.Unmarshal(schema, &obj) != nil || obj == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return schema
}

// turn is one message under construction.
type turn struct {
	role   llm.Role // RoleUser or RoleAssistant
	blocks []content
}

// messages converts a healed history. Tool results become tool_result blocks of user messages;
// consecutive messages of one role are merged into one, which also puts all results of one
// batch of tool calls into a single user message. A message with nothing to send is skipped.
// The last block of the last message carries a cache breakpoint.
func (m *model) messages(msgs []llm.Message) []message {
	var turns []turn
	add := func(role llm.Role, blocks []content) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{role, blocks})
	}
	for i := range msgs {
		msg := &msgs[i]
		switch msg.Role {
		case llm.RoleUser:
			add(llm.RoleUser, userBlocks(msg.Content))
		case llm.RoleTool:
			add(llm.RoleUser, []content{toolResult(msg)})
		case llm.RoleAssistant:
			add(llm.RoleAssistant, m.assistantBlocks(msg))
		}
	}
	out := make([]message, 0, len(turns))
	for i, t := range turns {
		if i == len(turns)-1 {
			// Thinking blocks take no cache breakpoint.
			if last := &t.blocks[len(t.blocks)-1]; last.Type != "thinking" && last.Type != "redacted_thinking" {
				last.CacheControl = ephemeral
			}
		}
		out = append(out, message{Role: string(t.role), Content: t.blocks})
	}
	return out
}

// userBlocks converts the text and image parts of a user message; empty text is dropped.
func userBlocks(parts []llm.Part) []content {
	var blocks []content
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, textBlock(p.Text))
			}
		case llm.PartImage:
			if len(p.Data) > 0 {
				blocks = append(blocks, imageBlock(p))
			}
		}
	}
	return blocks
}

// toolResult converts a tool result message into a tool_result block.
func toolResult(msg *llm.Message) content {
	return content{Type: "tool_result", ToolUseID: msg.ToolCallID, IsError: msg.IsError, Content: userBlocks(msg.Content)}
}

// assistantBlocks converts an assistant message. Thinking is replayed as thinking (or
// redacted_thinking) blocks only when it carries a signature and came from this very model;
// otherwise readable thinking is sent as plain text and redacted thinking is dropped, because
// the API rejects signatures it did not issue to the model. Tool-call arguments that are not a
// JSON object (truncated or invalid) are sent as {}: the tool result already told the model
// what went wrong.
func (m *model) assistantBlocks(msg *llm.Message) []content {
	same := msg.Provider == llm.ProviderAnthropic && msg.Model == m.cfg.Model &&
		(msg.API == "" || msg.API == llm.APIAnthropicMessages)
	var blocks []content
	for _, p := range msg.Content {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, textBlock(p.Text))
			}
		case llm.PartThinking:
			switch {
			case p.Redacted && same && p.Signature != "":
				blocks = append(blocks, content{Type: "redacted_thinking", Data: p.Signature})
			case p.Redacted:
			case same && p.Signature != "":
				blocks = append(blocks, content{Type: "thinking", Thinking: &p.Text, Signature: p.Signature})
			case p.Text != "":
				blocks = append(blocks, textBlock(p.Text))
			}
		case llm.PartToolCall:
			if p.Call != nil {
				blocks = append(blocks, content{Type: "tool_use", ID: p.Call.ID, Name: p.Call.Name, Input: toolInput(p.Call.Arguments)})
			}
		}
	}
	return blocks
}

func textBlock(text string) content { return content{Type: "text", Text: text} }

func imageBlock(p llm.Part) content {
	return content{Type: "image", Source: &imageSource{Type: "base64", MediaType: p.MIMEType,
		Data: base64.StdEncoding.EncodeToString(p.Data)}}
}

// toolInput returns arguments as a JSON object to send, or {} when they are not one.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}
