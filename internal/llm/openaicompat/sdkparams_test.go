package openaicompat

import (
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
)

// sdkParams is the request in the SDK's parameter types, as the adapter built it before
// encodeBody replaced them: the oracle of TestEncodeBodyMatchesSDK. The SDK adds "stream": true.
func sdkParams(cfg *Config, req *llm.Request) (sdk.ChatCompletionNewParams, *llm.Error) {
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(cfg.Model),
		Messages:      sdkMessages(req.System, req.Messages),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	tools, err := oaisdk.ToolSchemas(req.Tools)
	if err != nil {
		return p, err
	}
	for i, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: tools[i]}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		if cfg.Compat.StrictField {
			def.Strict = param.NewOpt(false)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(def))
	}
	if n := maxTokens(req, cfg.MaxTokens); n > 0 {
		if cfg.Compat.MaxTokensField == FieldMaxCompletionTokens {
			p.MaxCompletionTokens = param.NewOpt(int64(n))
		} else {
			p.MaxTokens = param.NewOpt(int64(n))
		}
	}
	if cfg.Compat.ReasoningEffort && req.Thinking != "" && req.Thinking != llm.ThinkingOff {
		p.ReasoningEffort = shared.ReasoningEffort(req.Thinking)
	}
	if cfg.Compat.PromptCacheKey && req.SessionID != "" {
		p.PromptCacheKey = param.NewOpt(req.SessionID)
	}
	return p, nil
}

// messages maps the healed history onto chat messages: the system prompt as role "system",
// user text and images, assistant text and tool calls (thinking is not sent back: the chat
// wire has no field for it), and tool results as role "tool". Images in tool results, which
// role "tool" cannot carry, follow the run of tool results as one user message.
func sdkMessages(system string, history []llm.Message) []sdk.ChatCompletionMessageParamUnion {
	var out []sdk.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, sdk.SystemMessage(system))
	}
	var images []llm.Part
	flush := func() {
		if len(images) == 0 {
			return
		}
		parts := []sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart("Images from the tool results above:")}
		for _, p := range images {
			parts = append(parts, sdkImagePart(p))
		}
		out = append(out, sdk.UserMessage(parts))
		images = nil
	}
	for _, m := range llm.Heal(history) {
		if m.Role != llm.RoleTool {
			flush()
		}
		switch m.Role {
		case llm.RoleUser:
			out = append(out, sdkUserMessage(m.Content))
		case llm.RoleAssistant:
			if am, ok := sdkAssistantMessage(&m); ok {
				out = append(out, am)
			}
		case llm.RoleTool:
			text, imgs := sdkSplitImages(m.Content)
			if text == "" {
				text = "(no output)"
				if len(imgs) > 0 {
					text = "(image attached below)"
				}
			}
			out = append(out, sdk.ToolMessage(text, m.ToolCallID))
			images = append(images, imgs...)
		}
	}
	flush()
	return out
}

// splitImages returns the text parts joined by newlines and the image parts.
func sdkSplitImages(parts []llm.Part) (string, []llm.Part) {
	var texts []string
	var images []llm.Part
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			texts = append(texts, p.Text)
		case llm.PartImage:
			images = append(images, p)
		}
	}
	return strings.Join(texts, "\n"), images
}

func sdkUserMessage(parts []llm.Part) sdk.ChatCompletionMessageParamUnion {
	text, images := sdkSplitImages(parts)
	if len(images) == 0 {
		return sdk.UserMessage(text)
	}
	var content []sdk.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			content = append(content, sdk.TextContentPart(p.Text))
		case llm.PartImage:
			content = append(content, sdkImagePart(p))
		}
	}
	return sdk.UserMessage(content)
}

func sdkImagePart(p llm.Part) sdk.ChatCompletionContentPartUnionParam {
	return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: oaisdk.DataURL(p)})
}

// assistantMessage maps an assistant message; ok is false when nothing of it can be sent.
func sdkAssistantMessage(m *llm.Message) (sdk.ChatCompletionMessageParamUnion, bool) {
	var am sdk.ChatCompletionAssistantMessageParam
	if text := m.Text(); text != "" {
		am.Content.OfString = param.NewOpt(text)
	}
	for _, c := range m.ToolCalls() {
		am.ToolCalls = append(am.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: oaisdk.HistoryArguments(c.Arguments)},
			},
		})
	}
	if !am.Content.OfString.Valid() && len(am.ToolCalls) == 0 {
		return sdk.ChatCompletionMessageParamUnion{}, false
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &am}, true
}
