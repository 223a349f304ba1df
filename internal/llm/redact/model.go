package redact

import (
	"context"

	"github.com/reinhq/rein/internal/llm"
)

// Errors wraps m so that every error text it reports passes New(keys...): the Err of the
// message Stream returns, of the messages of its done and error events, and of any event that
// carries one. Everything else passes unchanged. Wrap the provider adapter with the key it
// sends, inside [llm.Retry], so the retry events, the loop and every record see only the
// scrubbed text.
func Errors(m llm.Model, keys ...string) llm.Model {
	r := New(keys...)
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		s := scrubber{r: r, errs: map[*llm.Error]*llm.Error{}, msgs: map[*llm.Message]*llm.Message{}}
		msg := m.Stream(ctx, req, func(ev llm.Event) {
			ev.Err = s.err(ev.Err)
			ev.Message = s.msg(ev.Message)
			emit(ev)
		})
		return s.msg(msg)
	})
}

// scrubber hands on scrubbed copies of one call's errors and failed messages, the same copy
// for the same original, so the final event and the returned message stay one message.
type scrubber struct {
	r    *Redactor
	errs map[*llm.Error]*llm.Error
	msgs map[*llm.Message]*llm.Message
}

func (s *scrubber) err(e *llm.Error) *llm.Error {
	if e == nil {
		return nil
	}
	if c, ok := s.errs[e]; ok {
		return c
	}
	c := *e
	c.Message = s.r.Text(e.Message)
	s.errs[e] = &c
	return &c
}

func (s *scrubber) msg(m *llm.Message) *llm.Message {
	if m == nil || m.Err == nil {
		return m
	}
	if c, ok := s.msgs[m]; ok {
		return c
	}
	c := *m
	c.Err = s.err(m.Err)
	s.msgs[m] = &c
	return &c
}
