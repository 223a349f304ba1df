package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
)

// chunk is the part of a chat.completion.chunk the adapter reads. Unknown fields are ignored;
// fields whose type varies between servers are kept raw and read leniently.
type chunk struct {
	ID      string          `json:"id"`
	Choices []choice        `json:"choices"`
	Usage   *chunkUsage     `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        int64  `json:"index"`
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type delta struct {
	Content   string     `json:"content"`
	Refusal   string     `json:"refusal"`
	ToolCalls []toolCall `json:"tool_calls"`
	// Reasoning text, by server: vLLM, llama.cpp, DeepSeek: reasoning_content; ollama,
	// OpenRouter: reasoning. Raw, since a server may send an object under these names.
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ReasoningText    json.RawMessage `json:"reasoning_text"`
}

type toolCall struct {
	Index    *int64 `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string, or (some servers) the arguments as a JSON value.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type chunkUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	PromptCacheHitTokens json.RawMessage `json:"prompt_cache_hit_tokens"` // DeepSeek
}

// chatStream turns chunks into the assistant message.
type chatStream struct {
	a       *oaisdk.Assembler
	pricing llm.Pricing
	calls   []*chatCall
	reason  string // the last finish_reason seen
	chunks  int
	usage   *llm.Usage
	done    bool // the "[DONE]" terminator came
	cut     bool // the body ended inside an event other than the terminator
}

// chatCall is one tool call being received. It is started (part >= 0) once its name is known;
// arguments that arrive before are held in pending.
type chatCall struct {
	index   int64
	id      string
	name    string
	part    int
	pending string
}

func newChatStream(a *oaisdk.Assembler, p llm.Pricing) *chatStream {
	return &chatStream{a: a, pricing: p}
}

// chunk decodes and applies the data of one event. Malformed JSON is an error for
// [oaisdk.Classify] (a protocol error), and so is an error object sent as a chunk.
func (s *chatStream) chunk(data []byte) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("chunk %d: %w", s.chunks+1, err)
	}
	if oaisdk.HasError(c.Error) {
		return &oaisdk.EventError{Data: bytes.Clone(data)}
	}
	s.chunks++
	msg := s.a.Message()
	if msg.ResponseID == "" {
		msg.ResponseID = c.ID
	}
	if u := c.Usage; u != nil {
		var cached int64
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			cached = *d.CachedTokens
		} else {
			_ = json.Unmarshal(u.PromptCacheHitTokens, &cached)
		}
		s.usage = oaisdk.Usage(u.PromptTokens, u.CompletionTokens, cached, s.pricing)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only the first choice is requested
		}
		d := &ch.Delta
		for _, f := range []json.RawMessage{d.ReasoningContent, d.Reasoning, d.ReasoningText} {
			if t := rawString(f); t != "" {
				s.a.Thinking(t)
				break
			}
		}
		s.a.Text(d.Content)
		s.a.Text(d.Refusal)
		for j := range d.ToolCalls {
			s.toolCall(&d.ToolCalls[j])
		}
		if ch.FinishReason != "" {
			s.reason = ch.FinishReason
		}
	}
	return nil
}

// toolCall applies one tool-call delta. It copes with servers that omit the index or the id,
// reuse an index for a new call, or send the arguments as a JSON object instead of a string.
func (s *chatStream) toolCall(tc *toolCall) {
	var c *chatCall
	switch {
	case tc.Index != nil:
		for _, x := range slices.Backward(s.calls) {
			if x.index == *tc.Index {
				c = x
				break
			}
		}
		if c != nil && tc.ID != "" && c.id != "" && tc.ID != c.id {
			c = nil // same index, new call
		}
	case tc.ID != "":
		for _, x := range s.calls {
			if x.id == tc.ID {
				c = x
			}
		}
	case len(s.calls) > 0:
		c = s.calls[len(s.calls)-1]
	}
	if c == nil {
		c = &chatCall{index: int64(len(s.calls)), part: -1}
		if tc.Index != nil {
			c.index = *tc.Index
		}
		s.calls = append(s.calls, c)
	}
	if c.id == "" {
		c.id = tc.ID
	}
	if c.name == "" {
		c.name = tc.Function.Name
	}
	args := arguments(tc.Function.Arguments)
	if c.part >= 0 {
		s.a.Append(c.part, args)
		return
	}
	c.pending += args
	if c.name != "" {
		s.start(c)
	}
}

// arguments returns tool-call arguments sent as a JSON string, or the JSON text of arguments
// sent as another value (an object); null or absent is "".
func arguments(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		return rawString(raw)
	}
	return string(raw)
}

// rawString returns raw as a string when it is a JSON string, else "".
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// start opens the call's block, synthesizing an id when the server sent none.
func (s *chatStream) start(c *chatCall) {
	if c.id == "" {
		c.id = s.freeID(c.index)
	}
	c.part = s.a.StartCall(c.id, c.name)
	s.a.Append(c.part, c.pending)
	c.pending = ""
}

// freeID returns "call_<index>", made unique among the calls of the message.
func (s *chatStream) freeID(index int64) string {
	taken := func(id string) bool {
		return slices.ContainsFunc(s.calls, func(c *chatCall) bool { return c.id == id })
	}
	id := fmt.Sprintf("call_%d", index)
	for n := 2; taken(id); n++ {
		id = fmt.Sprintf("call_%d_%d", index, n)
	}
	return id
}

// finish ends the message after the body ended without a transport error. The stream is
// complete when a choice carried a finish_reason and the body did not end inside an event, or
// when the "[DONE]" terminator came (a lenient server that sends no finish_reason); anything
// else — an empty stream, an end of the body with neither — is an incomplete stream.
func (s *chatStream) finish() *llm.Message {
	ctx := context.Background()
	switch {
	case s.chunks == 0:
		return s.a.Fail(llm.IncompleteStream(ctx, "the stream ended before any data arrived"))
	case s.cut:
		return s.a.Fail(llm.IncompleteStream(ctx, "the stream ended in the middle of an event"))
	case s.reason == "" && !s.done:
		return s.a.Fail(llm.IncompleteStream(ctx, "the stream ended with neither a finish_reason nor [DONE]"))
	}
	for _, c := range s.calls {
		if c.part < 0 && (c.name != "" || c.pending != "") {
			s.start(c) // a call whose name never came: keep what there is
		}
	}
	s.a.Message().Usage = s.usage
	s.a.Message().FinishReason = s.reason
	calls := s.a.HasCalls()
	switch s.reason {
	case "length":
		return s.a.Done(llm.StopLength)
	case "content_filter":
		return s.a.Fail(&llm.Error{Kind: llm.KindInvalid,
			Message: "the provider's content filter stopped the response (finish_reason content_filter)"})
	}
	// stop, tool_calls, function_call, a missing finish_reason and dialects such as "eos":
	// the tool calls decide, since some servers say "stop" after calling tools.
	if calls {
		return s.a.Done(llm.StopToolUse)
	}
	return s.a.Done(llm.StopEnd)
}
