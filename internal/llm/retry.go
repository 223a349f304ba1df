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

// AttemptFunc numbers the attempts of one model call durably. [Retry] calls it before each
// attempt is sent — try is 1 for the first attempt of this Retry call, 2 for its first retry… —
// and sends the attempt only when it returns nil. It returns the attempt's number within the
// logical call (attempts of earlier processes included) and the call's attempt limit; an
// implementation records every attempt durably before it returns (the first one may already
// be recorded by its caller). An error means the attempt must not be sent: no attempt left,
// or the record could not be written.
type AttemptFunc func(ctx context.Context, try int) (attempt, maxAttempts int, err error)

type attemptsKey struct{}

// WithAttempts returns ctx carrying f: [Retry] numbers and bounds the call's attempts with f
// instead of counting them in memory under its own policy.
func WithAttempts(ctx context.Context, f AttemptFunc) context.Context {
	return context.WithValue(ctx, attemptsKey{}, f)
}

func attemptsFrom(ctx context.Context) AttemptFunc {
	f, _ := ctx.Value(attemptsKey{}).(AttemptFunc)
	return f
}

// Retry wraps m so that retryable failures ([Error.Retryable]) are retried under p. The delay
// is the server's retry-after when given, otherwise exponential backoff. A retry-after longer
// than p.MaxDelay is not waited for: the failure is returned at once. Before each retry an
// [EventRetry] is emitted so observers can discard the failed attempt's partial output.
//
// When the call's context carries an [AttemptFunc] ([WithAttempts]), it is asked before every
// attempt, and its numbers decide: the attempt it numbers as the limit is the last, so a call
// resumed by another process continues the count it left; an attempt it refuses is not sent
// (the failure before it is returned, or, for the first, a failed message).
func Retry(m Model, p RetryPolicy) Model {
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	return ModelFunc(func(ctx context.Context, req *Request, emit func(Event)) *Message {
		gate := attemptsFrom(ctx)
		if gate == nil {
			gate = func(_ context.Context, try int) (int, int, error) { return try, p.MaxAttempts, nil }
		}
		attempt, limit, err := gate(ctx, 1)
		if err != nil {
			out := Fail(&Message{Role: RoleAssistant}, &Error{Kind: KindAborted, Message: "the model call was not sent: " + err.Error()})
			emitFinal(emit, out)
			return out
		}
		delay := p.BaseDelay
		for try := 1; ; try++ {
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
			if msg.StopReason != StopError || e == nil || !e.Retryable || attempt >= limit || ctx.Err() != nil {
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
			// The next attempt is numbered (and recorded) only now, just before it is sent: a
			// crash while waiting leaves it uncounted.
			if attempt, limit, err = gate(ctx, try+1); err != nil {
				emitFinal(emit, final)
				return msg
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
