package script

import (
	"context"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/llm"
)

// streamer emits one answer's events and builds its message as it goes, so that an answer
// cut short by cancellation keeps what was sent so far.
type streamer struct {
	ctx   context.Context
	emit  func(llm.Event)
	delay time.Duration
	msg   *llm.Message
	err   *llm.Error // why the stream stopped early
}

// next waits the turn's delay, then reports whether the stream may go on. It returns false,
// with s.err set, once ctx is done.
func (s *streamer) next() bool {
	if s.delay > 0 {
		t := time.NewTimer(s.delay)
		select {
		case <-s.ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if err := s.ctx.Err(); err != nil {
		s.err = llm.TransportError(s.ctx, err)
		return false
	}
	return true
}

// fail ends the stream with e.
func (s *streamer) fail(e *llm.Error) *llm.Message {
	llm.Fail(s.msg, e)
	s.msg.Usage = &llm.Usage{}
	s.emit(llm.Event{Type: llm.EventError, Message: s.msg})
	return s.msg
}

// block streams a text or thinking block. With open set it stops after the last delta, as a
// stream cut mid-block does.
func (s *streamer) block(typ llm.PartType, text string, open bool) bool {
	start, delta, end := llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd
	if typ == llm.PartThinking {
		start, delta, end = llm.EventThinkingStart, llm.EventThinkingDelta, llm.EventThinkingEnd
	}
	if !s.next() {
		return false
	}
	i := len(s.msg.Content)
	s.msg.Content = append(s.msg.Content, llm.Part{Type: typ})
	s.emit(llm.Event{Type: start, Index: i})
	for _, chunk := range words(text) {
		if !s.next() {
			return false
		}
		s.msg.Content[i].Text += chunk
		s.emit(llm.Event{Type: delta, Index: i, Delta: chunk})
	}
	if open {
		return true
	}
	if !s.next() {
		return false
	}
	s.emit(llm.Event{Type: end, Index: i})
	return true
}

// toolCall streams one tool call, its arguments in a few chunks.
func (s *streamer) toolCall(id, name, args string) bool {
	if !s.next() {
		return false
	}
	i := len(s.msg.Content)
	call := &llm.ToolCall{ID: id, Name: name}
	s.msg.Content = append(s.msg.Content, llm.Part{Type: llm.PartToolCall, Call: call})
	s.emit(llm.Event{Type: llm.EventToolCallStart, Index: i, Call: &llm.ToolCall{ID: id, Name: name}})
	for _, chunk := range pieces(args) {
		if !s.next() {
			return false
		}
		call.Arguments += chunk
		s.emit(llm.Event{Type: llm.EventToolCallDelta, Index: i, Delta: chunk})
	}
	if !s.next() {
		return false
	}
	done := *call
	s.emit(llm.Event{Type: llm.EventToolCallEnd, Index: i, Call: &done})
	return true
}

// answer streams a successful turn: thinking, text, tool calls, then done.
func (s *streamer) answer(t *turn, pos position, caps map[string]string, pricing llm.Pricing) *llm.Message {
	ok := true
	if t.thinking != nil {
		ok = s.block(llm.PartThinking, *t.thinking, false)
	}
	if ok && t.text != nil {
		ok = s.block(llm.PartText, *t.text, false)
	}
	for i, c := range t.calls {
		if !ok {
			break
		}
		id := c.id
		if id == "" {
			id = defaultCallID(pos, i)
		}
		ok = s.toolCall(id, c.name, expandArgs(c.args, caps))
	}
	if !ok || !s.next() {
		return s.fail(s.err)
	}
	u := t.usage
	u.Price(pricing)
	s.msg.Usage = &u
	s.msg.StopReason = t.stop
	s.emit(llm.Event{Type: llm.EventDone, Message: s.msg})
	return s.msg
}

// failure streams a scripted failure: the partial text if any, then the error.
func (s *streamer) failure(f *failure) *llm.Message {
	if f.partial != "" && !s.block(llm.PartText, f.partial, true) {
		return s.fail(s.err)
	}
	if !s.next() {
		return s.fail(s.err)
	}
	return s.fail(&llm.Error{
		Kind:         f.kind,
		Status:       f.status,
		Message:      f.message,
		Retryable:    retryableKind(f.kind),
		RetryAfterMs: f.retryAfter.Milliseconds(),
	})
}

// defaultCallID derives a tool-call id from the request, so the same request always gets the
// same ids and different requests of one conversation get different ones.
func defaultCallID(pos position, i int) string {
	return fmt.Sprintf("call_%s_%d", pos.print[:12], i)
}

// words splits s into chunks of one word each, with the whitespace that follows it; leading
// whitespace stays with the first word.
func words(s string) []string {
	var out []string
	start, word, space := 0, false, false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && space && word {
			out = append(out, s[start:i])
			start, word = i, false
		}
		space = sp
		word = word || !sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// pieces splits s into at most about eight chunks of at least eight bytes, on rune boundaries.
func pieces(s string) []string {
	size := max(8, (len(s)+7)/8)
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
