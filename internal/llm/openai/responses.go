package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
	"github.com/reinhq/rein/internal/llm/sse"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// responsesModel streams the Responses API.
type responsesModel struct {
	cfg    Config
	client *sse.Client
}

// Stream streams one assistant turn. See the package documentation for the contract.
func (m *responsesModel) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (out *llm.Message) {
	msg := &llm.Message{Role: llm.RoleAssistant, Provider: llm.ProviderOpenAI, API: llm.APIOpenAIResponses,
		Model: m.cfg.Model, Time: time.Now().UnixMilli()}
	a := oaisdk.NewAssembler(msg, emit)
	defer oaisdk.Guard(a, &out, m.cfg.APIKey)

	body, perr := encodeRequest(&m.cfg, req)
	if perr != nil {
		return a.Fail(perr)
	}
	if ctx.Err() != nil {
		return a.Fail(llm.TransportError(ctx, ctx.Err()))
	}
	x := watchdog.New(m.cfg.Timeouts)
	getBody := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	res, err := m.client.Post(ctx, "responses", int64(len(body)), getBody, x)
	if err != nil {
		return a.Fail(oaisdk.StreamError(ctx, x, err, m.cfg.APIKey))
	}
	defer func() { _ = res.Body.Close() }()
	d := sse.NewDecoder(res.Body)
	defer d.Release()
	s := &responseStream{a: a, key: m.cfg.APIKey, pricing: m.cfg.Pricing, items: map[string]*outputItem{}}
	for d.Next() && ctx.Err() == nil {
		ev := d.Event()
		if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
			break
		}
		final, err := s.decode(ev)
		if err != nil {
			return a.Fail(oaisdk.StreamError(ctx, x, err, m.cfg.APIKey))
		}
		if final != nil {
			return final
		}
	}
	if err := d.Err(); err != nil || ctx.Err() != nil {
		return a.Fail(oaisdk.StreamError(ctx, x, err, m.cfg.APIKey))
	}
	return a.Fail(llm.IncompleteStream(ctx, "the stream ended before response.completed"))
}

// outputItem is an output item being received; part is its content part, or -1 before its
// first content.
type outputItem struct {
	kind    string // message, reasoning, function_call
	part    int
	summary int64 // index of the reasoning summary part being received
}

// responseStream turns Responses stream events into the assistant message.
type responseStream struct {
	a       *oaisdk.Assembler
	key     string
	pricing llm.Pricing
	items   map[string]*outputItem
}

func (s *responseStream) item(id, kind string) *outputItem {
	it := s.items[id]
	if it == nil {
		it = &outputItem{kind: kind, part: -1}
		s.items[id] = it
	}
	return it
}

// decode decodes and applies one event and returns the final message when the event ends the
// response. Malformed JSON is an error, and so is an event with a top-level error object.
func (s *responseStream) decode(e sse.Event) (*llm.Message, error) {
	var ev streamEvent
	if err := json.Unmarshal(e.Data, &ev); err != nil {
		return nil, fmt.Errorf("event %q: %w", e.Name, err)
	}
	if oaisdk.HasError(ev.Error) {
		return nil, &oaisdk.EventError{Data: bytes.Clone(e.Data)}
	}
	if ev.Type == "" {
		ev.Type = e.Name
	}
	if raw := ev.Item; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &ev.item); err != nil {
			return nil, fmt.Errorf("event %q: item: %w", ev.Type, err)
		}
		ev.item.raw = raw
	}
	return s.event(&ev), nil
}

// event applies one event and returns the final message when the event ends the response.
func (s *responseStream) event(ev *streamEvent) *llm.Message {
	msg := s.a.Message()
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response.ID != "" {
			msg.ResponseID = ev.Response.ID
		}
	case "response.output_item.added":
		it := &ev.item
		switch it.Type {
		case "function_call":
			s.startCall(it)
		case "message", "reasoning":
			s.item(it.ID, it.Type)
		}
	case "response.output_text.delta", "response.refusal.delta":
		it := s.item(ev.ItemID, "message")
		if ev.Delta == "" {
			break
		}
		if i, _ := s.a.Open(); it.part < 0 || i != it.part {
			it.part = s.a.Start(llm.Part{Type: llm.PartText, Signature: ev.ItemID})
		}
		s.a.Append(it.part, ev.Delta)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		it := s.item(ev.ItemID, "reasoning")
		if ev.Delta == "" {
			break
		}
		switch {
		case it.part < 0:
			it.part = s.a.Start(llm.Part{Type: llm.PartThinking})
			it.summary = ev.SummaryIndex
		case ev.Type == "response.reasoning_summary_text.delta" && ev.SummaryIndex != it.summary:
			it.summary = ev.SummaryIndex
			s.a.Append(it.part, "\n\n")
		}
		s.a.Append(it.part, ev.Delta)
	case "response.function_call_arguments.delta":
		if it := s.items[ev.ItemID]; it != nil && it.kind == "function_call" {
			s.a.Append(it.part, ev.Delta)
		}
	case "response.function_call_arguments.done":
		if it := s.items[ev.ItemID]; it != nil && it.kind == "function_call" {
			s.completeArgs(it, ev.Arguments)
		}
	case "response.output_item.done":
		s.itemDone(&ev.item)
	case "response.completed":
		s.usage(&ev.Response)
		s.a.Message().FinishReason = "completed"
		if s.a.HasCalls() {
			return s.a.Done(llm.StopToolUse)
		}
		return s.a.Done(llm.StopEnd)
	case "response.incomplete":
		s.usage(&ev.Response)
		s.a.Message().FinishReason = ev.Response.IncompleteDetails.Reason
		if ev.Response.IncompleteDetails.Reason == "content_filter" {
			return s.a.Fail(&llm.Error{Kind: llm.KindInvalid,
				Message: "the provider's content filter stopped the response (incomplete: content_filter)"})
		}
		return s.a.Done(llm.StopLength) // max_output_tokens
	case "response.failed":
		s.usage(&ev.Response)
		e := ev.Response.Error
		return s.a.Fail(oaisdk.Redact(oaisdk.StreamFailure(oaisdk.Code(e.Code), e.Type, e.Message), s.key))
	case "error":
		return s.a.Fail(oaisdk.Redact(oaisdk.StreamFailure(oaisdk.Code(ev.Code), "", ev.Message), s.key))
	}
	return nil
}

// startCall opens the block of a function_call item.
func (s *responseStream) startCall(it *item) *outputItem {
	st := s.item(it.ID, "function_call")
	if st.part >= 0 {
		return st
	}
	id := it.CallID
	if id == "" {
		id = it.ID
	}
	if id == "" {
		id = fmt.Sprintf("call_%d", len(s.a.Message().ToolCalls()))
	}
	st.part = s.a.StartCall(id, it.Name)
	s.a.SetSignature(st.part, it.ID)
	s.a.Append(st.part, it.Arguments)
	return st
}

// completeArgs reconciles a call's streamed arguments with the complete text a done event
// carries: what is missing is appended; streamed text that disagrees is kept as it is.
func (s *responseStream) completeArgs(it *outputItem, full string) {
	cur := s.a.Message().Content[it.part].Call.Arguments
	if rest, ok := strings.CutPrefix(full, cur); ok {
		s.a.Append(it.part, rest)
	}
}

// itemDone ends an output item's block, filling in content that came only with the done event.
func (s *responseStream) itemDone(it *item) {
	switch it.Type {
	case "function_call":
		st := s.startCall(it)
		s.completeArgs(st, it.Arguments)
		s.a.End(st.part)
	case "message":
		st := s.item(it.ID, "message")
		if st.part < 0 {
			for _, c := range it.Content {
				if c.Type == "output_text" || c.Type == "refusal" {
					if st.part < 0 {
						st.part = s.a.Start(llm.Part{Type: llm.PartText, Signature: it.ID})
					}
					s.a.Append(st.part, c.Text+c.Refusal)
				}
			}
		}
		s.a.End(st.part)
	case "reasoning":
		st := s.item(it.ID, "reasoning")
		sig := ""
		if it.EncryptedContent != "" {
			sig = string(it.raw)
		}
		if st.part < 0 {
			var texts []string
			for _, p := range it.Summary {
				texts = append(texts, p.Text)
			}
			text := strings.Join(texts, "\n\n")
			if text == "" && sig == "" {
				return
			}
			st.part = s.a.Start(llm.Part{Type: llm.PartThinking})
			s.a.Append(st.part, text)
		}
		s.a.SetSignature(st.part, sig)
		s.a.End(st.part)
	}
}

func (s *responseStream) usage(r *response) {
	u := r.Usage
	if u == nil {
		return
	}
	s.a.Message().Usage = oaisdk.Usage(u.InputTokens, u.OutputTokens, u.InputTokensDetails.CachedTokens, s.pricing)
}

// streamEvent is the part of a Responses stream event the adapter reads; which fields are set
// depends on its type. Unknown fields are ignored.
type streamEvent struct {
	Type         string          `json:"type"`
	ItemID       string          `json:"item_id"`
	Delta        string          `json:"delta"`
	SummaryIndex int64           `json:"summary_index"`
	Arguments    string          `json:"arguments"`
	Item         json.RawMessage `json:"item"`
	Response     response        `json:"response"`
	Code         json.RawMessage `json:"code"` // string, number or null
	Message      string          `json:"message"`
	Error        json.RawMessage `json:"error"`

	item item // Item, decoded
}

// item is an output item.
type item struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Content          []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`

	raw json.RawMessage // the item as received
}

type response struct {
	ID    string `json:"id"`
	Usage *struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
	IncompleteDetails struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error struct {
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
	} `json:"error"`
}
