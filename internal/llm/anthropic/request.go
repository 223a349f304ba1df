package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/reinhq/rein/internal/llm"
)

// Thinking budget limits of the Messages API: budget_tokens is at least minThinkingBudget and
// below max_tokens; we keep at least minVisibleOutput tokens for the answer itself.
const (
	minThinkingBudget = 1024
	minVisibleOutput  = 1024
)

// params builds the Messages API request for req, and the options of the call.
//
// The thinking configuration is set on the JSON body rather than in the params: the SDK prints
// a deprecation warning to os.Stderr for budget thinking on some models, which would corrupt a
// terminal UI; the wire request is the same.
func (m *model) params(req *llm.Request) (sdk.MessageNewParams, []option.RequestOption) {
	var opts []option.RequestOption
	maxTokens, budget := m.limits(req)
	p := sdk.MessageNewParams{
		Model:     sdk.Model(m.cfg.Model),
		MaxTokens: int64(maxTokens),
		Messages:  m.messages(llm.Heal(req.Messages)),
	}
	if budget > 0 {
		opts = append(opts, option.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": budget}))
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Schema)}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	return p, opts
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
func inputSchema(schema json.RawMessage) sdk.ToolInputSchemaParam {
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(schema)) == 0 || json.Unmarshal(schema, &obj) != nil || obj == nil {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return param.Override[sdk.ToolInputSchemaParam](schema)
}

// turn is one message under construction.
type turn struct {
	role   llm.Role // RoleUser or RoleAssistant
	blocks []sdk.ContentBlockParamUnion
}

// messages converts a healed history. Tool results become tool_result blocks of user messages;
// consecutive messages of one role are merged into one, which also puts all results of one
// batch of tool calls into a single user message. A message with nothing to send is skipped.
// The last block of the last message carries a cache breakpoint.
func (m *model) messages(msgs []llm.Message) []sdk.MessageParam {
	var turns []turn
	add := func(role llm.Role, blocks []sdk.ContentBlockParamUnion) {
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
			add(llm.RoleUser, []sdk.ContentBlockParamUnion{toolResult(msg)})
		case llm.RoleAssistant:
			add(llm.RoleAssistant, m.assistantBlocks(msg))
		}
	}
	out := make([]sdk.MessageParam, 0, len(turns))
	for i, t := range turns {
		if i == len(turns)-1 {
			if cc := t.blocks[len(t.blocks)-1].GetCacheControl(); cc != nil {
				*cc = sdk.NewCacheControlEphemeralParam()
			}
		}
		if t.role == llm.RoleAssistant {
			out = append(out, sdk.NewAssistantMessage(t.blocks...))
		} else {
			out = append(out, sdk.NewUserMessage(t.blocks...))
		}
	}
	return out
}

// userBlocks converts the text and image parts of a user message; empty text is dropped.
func userBlocks(parts []llm.Part) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(p.Text))
			}
		case llm.PartImage:
			if len(p.Data) > 0 {
				blocks = append(blocks, sdk.NewImageBlockBase64(p.MIMEType, base64.StdEncoding.EncodeToString(p.Data)))
			}
		}
	}
	return blocks
}

// toolResult converts a tool result message into a tool_result block.
func toolResult(msg *llm.Message) sdk.ContentBlockParamUnion {
	r := &sdk.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
	if msg.IsError {
		r.IsError = param.NewOpt(true)
	}
	for _, p := range msg.Content {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: p.Text}})
			}
		case llm.PartImage:
			if len(p.Data) > 0 {
				r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{
					Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
						MediaType: sdk.Base64ImageSourceMediaType(p.MIMEType),
						Data:      base64.StdEncoding.EncodeToString(p.Data),
					}},
				}})
			}
		}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: r}
}

// assistantBlocks converts an assistant message. Thinking is replayed as thinking (or
// redacted_thinking) blocks only when it carries a signature and came from this very model;
// otherwise readable thinking is sent as plain text and redacted thinking is dropped, because
// the API rejects signatures it did not issue to the model. Tool-call arguments that are not a
// JSON object (truncated or invalid) are sent as {}: the tool result already told the model
// what went wrong.
func (m *model) assistantBlocks(msg *llm.Message) []sdk.ContentBlockParamUnion {
	same := msg.Provider == llm.ProviderAnthropic && msg.Model == m.cfg.Model &&
		(msg.API == "" || msg.API == llm.APIAnthropicMessages)
	var blocks []sdk.ContentBlockParamUnion
	for _, p := range msg.Content {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(p.Text))
			}
		case llm.PartThinking:
			switch {
			case p.Redacted && same && p.Signature != "":
				blocks = append(blocks, sdk.NewRedactedThinkingBlock(p.Signature))
			case p.Redacted:
			case same && p.Signature != "":
				blocks = append(blocks, sdk.NewThinkingBlock(p.Signature, p.Text))
			case p.Text != "":
				blocks = append(blocks, sdk.NewTextBlock(p.Text))
			}
		case llm.PartToolCall:
			if p.Call != nil {
				blocks = append(blocks, sdk.NewToolUseBlock(p.Call.ID, toolInput(p.Call.Arguments), p.Call.Name))
			}
		}
	}
	return blocks
}

// toolInput returns arguments as a JSON object to send, or {} when they are not one.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}
