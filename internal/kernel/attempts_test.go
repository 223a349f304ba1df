package kernel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// attemptLog is a recorder that numbers attempts like a session: `before` attempts were made
// by earlier processes, the call allows limit; refuse, if set, fails the recording of a try.
type attemptLog struct {
	kernel.Memory
	before, limit int
	n             int
	tries         []int
	refuse        map[int]error
}

func (l *attemptLog) Intend(ctx context.Context, in kernel.Intent) error {
	if in.Kind == kernel.IntentModelCall {
		if l.before >= l.limit {
			return &kernel.GaveUpError{Attempts: l.before, MaxAttempts: l.limit, Last: &llm.Error{Kind: llm.KindOverloaded, Status: 529, Message: "busy"}}
		}
		l.n = l.before + 1
	}
	return l.Memory.Intend(ctx, in)
}

func (l *attemptLog) Attempt(_ context.Context, _ string, try int) (int, int, error) {
	if err := l.refuse[try]; err != nil {
		return 0, 0, err
	}
	l.tries = append(l.tries, try)
	if try > 1 {
		l.n++
	}
	return l.n, l.limit, nil
}

// wrappedLog hides attemptLog's capability behind a wrapper, as telemetry does.
type wrappedLog struct{ rec *attemptLog }

func (w wrappedLog) Intend(ctx context.Context, in kernel.Intent) error { return w.rec.Intend(ctx, in) }
func (w wrappedLog) Settle(ctx context.Context, s kernel.Settlement) error {
	return w.rec.Settle(ctx, s)
}
func (w wrappedLog) Unwrap() kernel.Recorder { return w.rec }

func busyModel(sent *int) llm.Model {
	return llm.Retry(llm.ModelFunc(func(context.Context, *llm.Request, func(llm.Event)) *llm.Message {
		*sent++
		return llm.Fail(&llm.Message{}, &llm.Error{Kind: llm.KindOverloaded, Status: 529, Message: "busy", Retryable: true})
	}), llm.RetryPolicy{MaxAttempts: 9, Sleep: func(context.Context, time.Duration) error { return nil }})
}

// TestModelRetriesAreNumberedByTheRecorder: the retry decorator asks the recorder (found through
// a wrapper) before every try, continues the count the recorder holds, and each recorded retry
// is reported as a session_write of kind attempt.
func TestModelRetriesAreNumberedByTheRecorder(t *testing.T) {
	log := &attemptLog{before: 2, limit: 5}
	sent := 0
	a, events := newAgent(t, busyModel(&sent), wrappedLog{log})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	var me *kernel.ModelError
	if !errors.As(err, &me) || out.Status != kernel.StatusFailed {
		t.Fatalf("run ended %v (%v), want the model error", out.Status, err)
	}
	if sent != 3 || !cmp.Equal(log.tries, []int{1, 2, 3}) {
		t.Errorf("%d requests, tries %v; want the 3 attempts left of 5", sent, log.tries)
	}
	attempts := 0
	for _, ev := range *events {
		if ev.Type == kernel.EventSessionWrite && ev.Write.Kind == kernel.WriteAttempt {
			attempts++
		}
	}
	if attempts != 2 {
		t.Errorf("%d attempt writes reported, want 2", attempts)
	}
}

// TestGivenUpCallIsNotSent: a model call the recorder reports given up ends the run with the
// model error, and nothing is sent.
func TestGivenUpCallIsNotSent(t *testing.T) {
	log := &attemptLog{before: 5, limit: 5}
	sent := 0
	a, _ := newAgent(t, busyModel(&sent), log)
	_, err := a.Run(context.Background(), nil, llm.UserText("go"))
	var me *kernel.ModelError
	if !errors.As(err, &me) || me.Err.Status != 529 || sent != 0 {
		t.Fatalf("%d requests, ended with %v; want none and the given-up call's 529", sent, err)
	}
	var re *kernel.RecordError
	if errors.As(err, &re) {
		t.Errorf("a given-up call is not a recording failure: %v", err)
	}
}

// TestUnrecordedRetryStopsTheRun: a retry whose record fails is not sent, and the run stops
// with the recorder's error.
func TestUnrecordedRetryStopsTheRun(t *testing.T) {
	disk := errors.New("disk full")
	log := &attemptLog{limit: 5, refuse: map[int]error{3: disk}}
	sent := 0
	a, _ := newAgent(t, busyModel(&sent), log)
	_, err := a.Run(context.Background(), nil, llm.UserText("go"))
	var re *kernel.RecordError
	if !errors.As(err, &re) || !errors.Is(err, disk) || sent != 2 {
		t.Fatalf("%d requests, ended with %v; want 2 and the recorder's error", sent, err)
	}
}
