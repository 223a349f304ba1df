package kernel

import (
	"fmt"

	"github.com/reinhq/rein/internal/llm"
)

// Inbox holds user messages that arrive while a run is in flight (an RPC client's steer and
// follow_up). The kernel polls it on the loop's goroutine and never waits for it.
type Inbox interface {
	// Steering returns and removes the messages to deliver at the next turn boundary: after
	// the current turn's tool results, before the next model call — or, when the model has
	// just stopped, instead of stopping.
	Steering() []llm.Message
	// FollowUps returns and removes the messages to deliver when the run would otherwise stop
	// (the model stopped without tool calls and no steering message is pending).
	FollowUps() []llm.Message
}

// poll delivers what the inbox holds at the end of a turn: steering messages, and, when the
// model stopped (stopping), follow-ups if no steering message came. It reports whether any
// message was delivered, so that the loop goes on.
func (r *run) poll(turn int, stopping bool) (bool, error) {
	in := r.cfg.Inbox
	if in == nil || r.ctx.Err() != nil {
		return false, nil
	}
	msgs := in.Steering()
	if len(msgs) == 0 && stopping {
		msgs = in.FollowUps()
	}
	if len(msgs) == 0 {
		return false, nil
	}
	return true, r.deliver(turn, msgs)
}

// deliver records queued messages as user entries (one settlement of no intent, like a
// prompt) and appends them to the context.
func (r *run) deliver(turn int, msgs []llm.Message) error {
	cfg := &r.cfg
	now := cfg.Now().UnixMilli()
	entries := make([]Entry, len(msgs))
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		if m.Role == "" {
			m.Role = llm.RoleUser
		}
		if m.Role != llm.RoleUser {
			return fmt.Errorf("kernel: the inbox gave a %s message; only user messages can be queued", m.Role)
		}
		if m.Time == 0 {
			m.Time = now
		}
		m.ID = cfg.NewID()
		entries[i], out[i] = Entry{ID: m.ID, Message: m}, m
	}
	if err := r.settle(Settlement{Entries: entries}); err != nil {
		return err
	}
	r.context = append(r.context, out...)
	r.out.Messages = append(r.out.Messages, out...)
	for i := range out {
		cfg.Observe(Event{Type: EventMessageStart, Turn: turn, Message: &out[i]})
		cfg.Observe(Event{Type: EventMessageEnd, Turn: turn, Message: &out[i]})
	}
	return nil
}
