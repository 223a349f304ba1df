package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/reinhq/rein/internal/llm"
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
	reason  sdk.StopReason
	stopped bool         // message_stop arrived
	final   *llm.Message // set once the final event is emitted
}

func protocolError(format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.KindProtocol, Message: fmt.Sprintf(format, args...)}
}

// event handles one stream event; an error ends the stream.
func (s *state) event(ev sdk.MessageStreamEventUnion) *llm.Error {
	switch ev.Type {
	case "message_start":
		s.msg.ResponseID = ev.Message.ID
		u := ev.Message.Usage
		s.setUsage(u.InputTokens, u.JSON.InputTokens.Valid(), u.OutputTokens, u.JSON.OutputTokens.Valid(),
			u.CacheReadInputTokens, u.JSON.CacheReadInputTokens.Valid(),
			u.CacheCreationInputTokens, u.JSON.CacheCreationInputTokens.Valid())
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
		s.delta(b, &ev.Delta)
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
		u := ev.Usage
		s.setUsage(u.InputTokens, u.JSON.InputTokens.Valid(), u.OutputTokens, u.JSON.OutputTokens.Valid(),
			u.CacheReadInputTokens, u.JSON.CacheReadInputTokens.Valid(),
			u.CacheCreationInputTokens, u.JSON.CacheCreationInputTokens.Valid())
	case "message_stop":
		s.stopped = true
	}
	// Other event types (ping is dropped by the SDK) carry nothing rein models.
	return nil
}

// setUsage overwrites the counts the event reported: message_delta's override message_start's.
func (s *state) setUsage(in int64, inOK bool, out int64, outOK bool, read int64, readOK bool, write int64, writeOK bool) {
	if inOK {
		s.usage.Input = int(in)
	}
	if outOK {
		s.usage.Output = int(out)
	}
	if readOK {
		s.usage.CacheRead = int(read)
	}
	if writeOK {
		s.usage.CacheWrite = int(write)
	}
}

func (s *state) start(wire int64, cb *sdk.ContentBlockStartEventContentBlockUnion) {
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
		if raw := cb.JSON.Input.Raw(); isObject(raw) {
			b.initial = raw
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

func (s *state) delta(b *block, d *sdk.MessageStreamEventUnionDelta) {
	if b.closed {
		return
	}
	switch {
	case d.Type == "text_delta" && b.typ == llm.PartText:
		s.appendText(b, d.Text, llm.EventTextDelta)
	case d.Type == "thinking_delta" && b.typ == llm.PartThinking:
		s.appendText(b, d.Thinking, llm.EventThinkingDelta)
	case d.Type == "signature_delta" && b.typ == llm.PartThinking:
		s.msg.Content[b.part].Signature += d.Signature
	case d.Type == "input_json_delta" && b.typ == llm.PartToolCall:
		b.args = true
		s.appendText(b, d.PartialJSON, llm.EventToolCallDelta)
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
	s.msg.FinishReason = string(s.reason)
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
func stopReason(r sdk.StopReason, calls bool) llm.StopReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence, sdk.StopReasonRefusal, sdk.StopReasonPauseTurn:
		return llm.StopEnd
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return llm.StopLength
	case sdk.StopReasonToolUse:
		return llm.StopToolUse
	}
	if calls {
		return llm.StopToolUse
	}
	return llm.StopEnd
}

// isObject reports whether raw is a JSON object with at least one member.
func isObject(raw string) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal([]byte(raw), &obj) == nil && len(obj) > 0
}
