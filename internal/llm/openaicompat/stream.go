package openaicompat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
)

// chatStream turns chunks into the assistant message.
type chatStream struct {
	a       *oaisdk.Assembler
	pricing llm.Pricing
	calls   []*chatCall
	reason  string // the last finish_reason seen
	chunks  int
	usage   *llm.Usage
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

// reasoningFields are the delta fields compatible servers put reasoning text in (vLLM,
// llama.cpp, DeepSeek: reasoning_content; ollama, OpenRouter: reasoning).
var reasoningFields = []string{"reasoning_content", "reasoning", "reasoning_text"}

func newChatStream(a *oaisdk.Assembler, p llm.Pricing) *chatStream {
	return &chatStream{a: a, pricing: p}
}

func (s *chatStream) chunk(c sdk.ChatCompletionChunk) {
	s.chunks++
	msg := s.a.Message()
	if msg.ResponseID == "" {
		msg.ResponseID = c.ID
	}
	if c.JSON.Usage.Valid() {
		u := c.Usage
		cached := u.PromptTokensDetails.CachedTokens
		if !u.PromptTokensDetails.JSON.CachedTokens.Valid() {
			cached = extraInt(u.JSON.ExtraFields, "prompt_cache_hit_tokens")
		}
		s.usage = oaisdk.Usage(u.PromptTokens, u.CompletionTokens, cached, s.pricing)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only the first choice is requested
		}
		d := ch.Delta
		for _, f := range reasoningFields {
			if t := extraString(d.JSON.ExtraFields, f); t != "" {
				s.a.Thinking(t)
				break
			}
		}
		s.a.Text(d.Content)
		s.a.Text(d.Refusal)
		for j := range d.ToolCalls {
			s.toolCall(j, &d.ToolCalls[j])
		}
		if ch.FinishReason != "" {
			s.reason = ch.FinishReason
		}
	}
}

// toolCall applies one tool-call delta. It copes with servers that omit the index or the id,
// reuse an index for a new call, or send the arguments as a JSON object instead of a string.
func (s *chatStream) toolCall(pos int, tc *sdk.ChatCompletionChunkChoiceDeltaToolCall) {
	var c *chatCall
	hasIndex := tc.JSON.Index.Valid()
	switch {
	case hasIndex:
		for _, x := range slices.Backward(s.calls) {
			if x.index == tc.Index {
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
		if hasIndex {
			c.index = tc.Index
		}
		s.calls = append(s.calls, c)
	}
	if c.id == "" {
		c.id = tc.ID
	}
	if c.name == "" {
		c.name = tc.Function.Name
	}
	args := tc.Function.Arguments
	if f := tc.Function.JSON.Arguments; !f.Valid() && f.Raw() != "" && f.Raw() != "null" {
		args = f.Raw() // arguments sent as a JSON value, not a string
	}
	if c.part >= 0 {
		s.a.Append(c.part, args)
		return
	}
	c.pending += args
	if c.name != "" {
		s.start(c)
	}
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
func (s *chatStream) finish(tail *sseTail) *llm.Message {
	ctx := context.Background()
	switch {
	case s.chunks == 0:
		return s.a.Fail(llm.IncompleteStream(ctx, "the stream ended before any data arrived"))
	case tail.cutMidEvent():
		return s.a.Fail(llm.IncompleteStream(ctx, "the stream ended in the middle of an event"))
	case s.reason == "" && !tail.done:
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

func extraString(fields map[string]respjson.Field, name string) string {
	f, ok := fields[name]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal([]byte(f.Raw()), &s) != nil {
		return ""
	}
	return s
}

func extraInt(fields map[string]respjson.Field, name string) int64 {
	f, ok := fields[name]
	if !ok {
		return 0
	}
	var n int64
	if json.Unmarshal([]byte(f.Raw()), &n) != nil {
		return 0
	}
	return n
}
