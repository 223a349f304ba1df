package llm

import (
	"context"
	"time"
)

// RetryPolicy says how a failed model call is retried.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt; 1 disables retries.
	MaxAttempts int
	// BaseDelay doubles after each failed attempt, up to MaxDelay.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// Sleep waits d or until ctx is done. Nil means a real timer; tests pass a recorder.
	Sleep func(ctx context.Context, d time.Duration) error `json:"-"`
}

// DefaultRetryPolicy retries four times with 2s, 4s, 8s, 16s and fails fast when a server asks
// for a wait longer than a minute.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, BaseDelay: 2 * time.Second, MaxDelay: 60 * time.Second}

// Retry wraps m so that retryable failures ([Error.Retryable]) are retried under p. The delay
// is the server's retry-after when given, otherwise exponential backoff. A retry-after longer
// than p.MaxDelay is not waited for: the failure is returned at once. Before each retry an
// [EventRetry] is emitted so observers can discard the failed attempt's partial output.
func Retry(m Model, p RetryPolicy) Model {
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	return ModelFunc(func(ctx context.Context, req *Request, emit func(Event)) *Message {
		delay := p.BaseDelay
		for attempt := 1; ; attempt++ {
			var final *Message
			msg := m.Stream(ctx, req, func(ev Event) {
				if ev.Type == EventDone || ev.Type == EventError {
					final = ev.Message
					return // held back until we know whether this attempt is the last
				}
				emit(ev)
			})
			if final == nil {
				final = msg
			}
			e := msg.Err
			if msg.StopReason != StopError || e == nil || !e.Retryable || attempt >= p.MaxAttempts || ctx.Err() != nil {
				emitFinal(emit, final)
				return msg
			}
			wait := delay
			if ra := e.RetryAfter(); ra > 0 {
				if p.MaxDelay > 0 && ra > p.MaxDelay {
					emitFinal(emit, final)
					return msg
				}
				wait = ra
			}
			if p.MaxDelay > 0 && wait > p.MaxDelay {
				wait = p.MaxDelay
			}
			emit(Event{Type: EventRetry, Err: e, Attempt: attempt, DelayMs: wait.Milliseconds()})
			if err := sleep(ctx, wait); err != nil {
				out := Fail(&Message{Role: RoleAssistant, Provider: msg.Provider, API: msg.API, Model: msg.Model},
					&Error{Kind: KindAborted, Message: "request aborted while waiting to retry"})
				emitFinal(emit, out)
				return out
			}
			delay *= 2
		}
	})
}

func emitFinal(emit func(Event), m *Message) {
	t := EventDone
	if m.Failed() {
		t = EventError
	}
	emit(Event{Type: t, Message: m})
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
