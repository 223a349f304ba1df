package openai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
)

// buildParams maps a request onto Responses API parameters. The SDK adds "stream": true.
func buildParams(cfg *Config, req *llm.Request) (responses.ResponseNewParams, *llm.Error) {
	p := responses.ResponseNewParams{
		Model: shared.ResponsesModel(cfg.Model),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: inputItems(cfg.Model, req.Messages)},
		// Nothing is stored server side: history is sent in full, reasoning as encrypted items.
		Store: param.NewOpt(false),
	}
	if req.System != "" {
		p.Instructions = param.NewOpt(req.System)
	}
	schemas, err := oaisdk.ToolSchemas(req.Tools)
	if err != nil {
		return p, err
	}
	for i, t := range req.Tools {
		f := &responses.FunctionToolParam{Name: t.Name, Parameters: schemas[i], Strict: param.NewOpt(false)}
		if t.Description != "" {
			f.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: f})
	}
	n := req.MaxTokens
	if n <= 0 {
		n = cfg.MaxTokens
	}
	if n > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(n))
	}
	if req.Thinking != "" && req.Thinking != llm.ThinkingOff {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(req.Thinking), Summary: shared.ReasoningSummaryAuto}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if req.SessionID != "" {
		p.PromptCacheKey = param.NewOpt(req.SessionID)
	}
	return p, nil
}

// inputItems maps the healed history onto input items. See the package documentation for what
// is replayed of earlier assistant messages.
func inputItems(model string, history []llm.Message) responses.ResponseInputParam {
	var items responses.ResponseInputParam
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

func userItem(parts []llm.Part) responses.ResponseInputItemUnionParam {
	var content responses.ResponseInputMessageContentListParam
	var texts []string
	images := false
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			texts = append(texts, p.Text)
			content = append(content, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: p.Text}})
		case llm.PartImage:
			images = true
			content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				Detail: responses.ResponseInputImageDetailAuto, ImageURL: param.NewOpt(oaisdk.DataURL(p))}})
		}
	}
	if !images {
		return responses.ResponseInputItemParamOfMessage(strings.Join(texts, "\n"), responses.EasyInputMessageRoleUser)
	}
	return responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser)
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

// raw wraps JSON the SDK's typed parameters cannot express (required empty arrays) as an item.
func raw(v any) responses.ResponseInputItemUnionParam {
	b, _ := json.Marshal(v)
	return param.Override[responses.ResponseInputItemUnionParam](json.RawMessage(b))
}

// assistantItems maps an assistant message. Its reasoning is replayed, with the output item ids
// of its text and tool calls, only when the message came from this very model through the
// Responses API and carries encrypted reasoning; otherwise thinking is dropped and text and
// calls go back without item ids (plain input items, always accepted).
func assistantItems(model string, m *llm.Message) []responses.ResponseInputItemUnionParam {
	replay := false
	if m.Provider == llm.ProviderOpenAI && m.API == llm.APIOpenAIResponses && m.Model == model {
		for _, p := range m.Content {
			if _, ok := replayableReasoning(p.Signature); ok && p.Type == llm.PartThinking {
				replay = true
			}
		}
	}
	var items []responses.ResponseInputItemUnionParam
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
			items = append(items, raw(map[string]any{"type": "reasoning", "id": r.ID,
				"summary": summary, "encrypted_content": r.EncryptedContent}))
		case llm.PartText:
			if p.Text == "" {
				continue
			}
			if replay && p.Signature != "" {
				items = append(items, raw(map[string]any{"type": "message", "role": "assistant", "id": p.Signature,
					"status": "completed", "content": []map[string]any{{"type": "output_text", "text": p.Text, "annotations": []any{}}}}))
				continue
			}
			items = append(items, responses.ResponseInputItemParamOfMessage(p.Text, responses.EasyInputMessageRoleAssistant))
		case llm.PartToolCall:
			if p.Call == nil {
				continue
			}
			fc := &responses.ResponseFunctionToolCallParam{CallID: p.Call.ID, Name: p.Call.Name,
				Arguments: oaisdk.HistoryArguments(p.Call.Arguments)}
			if replay && p.Signature != "" {
				fc.ID = param.NewOpt(p.Signature)
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: fc})
		}
	}
	return items
}

// toolOutput maps a tool result onto a function_call_output: its text, or a list of text and
// images when it has images.
func toolOutput(m *llm.Message) responses.ResponseInputItemUnionParam {
	out := &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt(m.ToolCallID)}
	var list responses.ResponseFunctionCallOutputItemListParam
	var texts []string
	images := false
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartText:
			texts = append(texts, p.Text)
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: p.Text}})
		case llm.PartImage:
			images = true
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				Detail: responses.ResponseInputImageContentDetailAuto, ImageURL: param.NewOpt(oaisdk.DataURL(p))}})
		}
	}
	if images {
		out.Output.OfResponseFunctionCallOutputItemArray = list
	} else {
		out.Output.OfString = param.NewOpt(strings.Join(texts, "\n"))
	}
	return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: out}
}
