package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/sse"
)

// block is one content block of the response being streamed.
type block struct {
	part    int // index into the message's Content; -1 for blocks rein does not model
	typ     llm.PartType
	text    strings.Builder // text, thinking or tool-call arguments received so far
	args    bool            // a tool call received argument text
	initial string          // a tool call's input from content_block_start, used without deltas
	closed  bool
}

// state turns Messages API stream events into the message and its [llm.Event]s.
type state struct {
	msg     *llm.Message
	emit    func(llm.Event)
	price   llm.Pricing
	index   map[int64]*block // by the wire's block index
	blocks  []*block         // in start order
	usage   llm.Usage
	reason  string
	stopped bool         // message_stop arrived
	final   *llm.Message // set once the final event is emitted
}

func protocolError(format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.KindProtocol, Message: fmt.Sprintf(format, args...)}
}

// streamEvent is the data of one event of the stream; the fields an event type does not have
// stay empty.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		ID    string `json:"id"`
		Usage usage  `json:"usage"`
	} `json:"message"`
	ContentBlock contentStart `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage usage `json:"usage"`
}

// contentStart is the block of a content_block_start event.
type contentStart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// usage holds the counts an event reported; nil is a count it did not report.
type usage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

// event handles one stream event; an error ends the stream.
func (s *state) event(e sse.Event) *llm.Error {
	if e.Name == "error" {
		return eventError(e.Data)
	}
	var ev streamEvent
	if err := json.Unmarshal(e.Data, &ev); err != nil {
		return protocolError("could not decode the %q event of the response stream: %s", e.Name, err)
	}
	switch ev.Type {
	case "error":
		return eventError(e.Data)
	case "message_start":
		s.msg.ResponseID = ev.Message.ID
		s.setUsage(&ev.Message.Usage)
	case "content_block_start":
		if _, dup := s.index[ev.Index]; dup {
			return protocolError("content block %d started twice", ev.Index)
		}
		s.start(ev.Index, &ev.ContentBlock)
	case "content_block_delta":
		b := s.index[ev.Index]
		if b == nil {
			return protocolError("delta for content block %d, which was never started", ev.Index)
		}
		s.delta(b, ev.Delta.Type, ev.Delta.Text, ev.Delta.Thinking, ev.Delta.Signature, ev.Delta.PartialJSON)
	case "content_block_stop":
		b := s.index[ev.Index]
		if b == nil {
			return protocolError("stop for content block %d, which was never started", ev.Index)
		}
		s.stop(b)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.reason = ev.Delta.StopReason
		}
		s.setUsage(&ev.Usage)
	case "message_stop":
		s.stopped = true
	}
	// Other event types (ping) carry nothing rein models.
	return nil
}

// setUsage overwrites the counts the event reported: message_delta's override message_start's.
func (s *state) setUsage(u *usage) {
	for _, f := range []struct {
		from *int
		to   *int
	}{{u.InputTokens, &s.usage.Input}, {u.OutputTokens, &s.usage.Output},
		{u.CacheReadInputTokens, &s.usage.CacheRead}, {u.CacheCreationInputTokens, &s.usage.CacheWrite}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
}

func (s *state) start(wire int64, cb *contentStart) {
	b := &block{part: len(s.msg.Content)}
	s.index[wire] = b
	s.blocks = append(s.blocks, b)
	switch cb.Type {
	case "text":
		b.typ = llm.PartText
		s.msg.Content = append(s.msg.Content, llm.Part{Type: llm.PartText})
		s.emit(llm.Event{Type: llm.EventTextStart, Index: b.part})
		s.appendText(b, cb.Text, llm.EventTextDelta)
	case "thinking":
		b.typ = llm.PartThinking
		s.msg.Content = append(s.msg.Content, llm.Part{Type: llm.PartThinking, Signature: cb.Signature})
		s.emit(llm.Event{Type: llm.EventThinkingStart, Index: b.part})
		s.appendText(b, cb.Thinking, llm.EventThinkingDelta)
	case "redacted_thinking":
		b.typ = llm.PartThinking
		s.msg.Content = append(s.msg.Content, llm.Part{Type: llm.PartThinking, Redacted: true, Signature: cb.Data})
		s.emit(llm.Event{Type: llm.EventThinkingStart, Index: b.part})
	case "tool_use":
		b.typ = llm.PartToolCall
		if isObject(cb.Input) {
			b.initial = string(cb.Input)
		}
		s.msg.Content = append(s.msg.Content, llm.Call(cb.ID, cb.Name, ""))
		s.emit(llm.Event{Type: llm.EventToolCallStart, Index: b.part, Call: &llm.ToolCall{ID: cb.ID, Name: cb.Name}})
	default:
		// Server tool blocks and other kinds rein does not send tools for.
		b.part, b.closed = -1, true
	}
}

func (s *state) appendText(b *block, text string, typ llm.EventType) {
	if text == "" {
		return
	}
	b.text.WriteString(text)
	s.emit(llm.Event{Type: typ, Index: b.part, Delta: text})
}

func (s *state) delta(b *block, typ, text, thinking, signature, partialJSON string) {
	if b.closed {
		return
	}
	switch {
	case typ == "text_delta" && b.typ == llm.PartText:
		s.appendText(b, text, llm.EventTextDelta)
	case typ == "thinking_delta" && b.typ == llm.PartThinking:
		s.appendText(b, thinking, llm.EventThinkingDelta)
	case typ == "signature_delta" && b.typ == llm.PartThinking:
		s.msg.Content[b.part].Signature += signature
	case typ == "input_json_delta" && b.typ == llm.PartToolCall:
		b.args = true
		s.appendText(b, partialJSON, llm.EventToolCallDelta)
	}
	// citations_delta and mismatched deltas carry nothing rein models.
}

// stop closes b and emits its end event. A tool call that received no argument text gets the
// input of its start event, or {}, as one last delta, so that deltas always add up.
func (s *state) stop(b *block) {
	if b.closed {
		return
	}
	if b.typ == llm.PartToolCall && b.text.Len() == 0 {
		args := b.initial
		if args == "" {
			args = "{}"
		}
		s.appendText(b, args, llm.EventToolCallDelta)
	}
	s.flush(b)
	b.closed = true
	p := &s.msg.Content[b.part]
	switch b.typ {
	case llm.PartText:
		s.emit(llm.Event{Type: llm.EventTextEnd, Index: b.part})
	case llm.PartThinking:
		s.emit(llm.Event{Type: llm.EventThinkingEnd, Index: b.part})
	case llm.PartToolCall:
		call := *p.Call
		s.emit(llm.Event{Type: llm.EventToolCallEnd, Index: b.part, Call: &call})
	}
}

// flush stores what b received in its part.
func (s *state) flush(b *block) {
	if b.part < 0 {
		return
	}
	p := &s.msg.Content[b.part]
	switch b.typ {
	case llm.PartToolCall:
		p.Call.Arguments = b.text.String()
	case llm.PartThinking:
		if !p.Redacted {
			p.Text = b.text.String()
		}
	default:
		p.Text = b.text.String()
	}
}

// finish closes the blocks left open and ends the stream successfully.
func (s *state) finish() *llm.Message {
	for _, b := range s.blocks {
		s.stop(b)
	}
	s.msg.StopReason = stopReason(s.reason, len(s.msg.ToolCalls()) > 0)
	s.msg.FinishReason = s.reason
	s.setFinalUsage()
	s.final = s.msg
	s.emit(llm.Event{Type: llm.EventDone, Message: s.msg})
	return s.msg
}

// fail ends the stream with err, keeping what arrived so far.
func (s *state) fail(err *llm.Error) *llm.Message {
	for _, b := range s.blocks {
		if !b.closed {
			s.flush(b)
		}
	}
	s.setFinalUsage()
	llm.Fail(s.msg, err)
	s.final = s.msg
	s.emit(llm.Event{Type: llm.EventError, Message: s.msg})
	return s.msg
}

func (s *state) setFinalUsage() {
	u := s.usage
	u.Price(s.price)
	s.msg.Usage = &u
}

// stopReason maps the API's stop reason. refusal and pause_turn end the turn like end_turn:
// rein sends no server tools, so a paused turn has nothing to resume, and a refusal is an
// answer. An unknown or missing reason means toolUse when the message has tool calls.
func stopReason(r string, calls bool) llm.StopReason {
	switch r {
	case "end_turn", "stop_sequence", "refusal", "pause_turn":
		return llm.StopEnd
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopLength
	case "tool_use":
		return llm.StopToolUse
	}
	if calls {
		return llm.StopToolUse
	}
	return llm.StopEnd
}

// isObject reports whether raw is a JSON object with at least one member.
func isObject(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(raw, &obj) == nil && len(obj) > 0
}
