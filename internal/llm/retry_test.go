package llm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/llm"
)

// overloaded always fails with a retryable 529 and logs each send.
func overloaded(log *[]string) llm.Model {
	return llm.ModelFunc(func(context.Context, *llm.Request, func(llm.Event)) *llm.Message {
		*log = append(*log, "send")
		return llm.Fail(&llm.Message{}, &llm.Error{Kind: llm.KindOverloaded, Status: 529, Message: "overloaded", Retryable: true})
	})
}

// ledgerGate numbers attempts as a durable log would: the call already made `before` attempts,
// its limit is max; every try after the first is "recorded" in log before Retry may send it.
func ledgerGate(log *[]string, before, limit int) llm.AttemptFunc {
	n := before
	return func(_ context.Context, try int) (int, int, error) {
		if try == 1 {
			n++ // the caller's intent recorded it
			*log = append(*log, "intent")
			return n, limit, nil
		}
		if n >= limit {
			return 0, 0, errors.New("no attempt left")
		}
		n++
		*log = append(*log, "record")
		return n, limit, nil
	}
}

func TestRetryContinuesTheDurableCount(t *testing.T) {
	var log []string
	var retries []int
	sleep := func(context.Context, time.Duration) error { log = append(log, "sleep"); return nil }
	m := llm.Retry(overloaded(&log), llm.RetryPolicy{MaxAttempts: 5, Sleep: sleep})
	// Three attempts were made by an earlier process: two are left, whatever the local policy.
	ctx := llm.WithAttempts(context.Background(), ledgerGate(&log, 2, 5))
	msg := m.Stream(ctx, &llm.Request{}, func(ev llm.Event) {
		if ev.Type == llm.EventRetry {
			retries = append(retries, ev.Attempt)
		}
	})
	if !msg.Failed() || msg.Err.Kind != llm.KindOverloaded {
		t.Fatalf("final message %+v, want the last 529", msg)
	}
	// Every send is preceded by its record; the wait comes before the record, so a crash while
	// waiting leaves the next attempt uncounted.
	want := []string{"intent", "send", "sleep", "record", "send", "sleep", "record", "send"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("order of records and sends (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3, 4}, retries); diff != "" {
		t.Errorf("retry events number the attempts within the call (-want +got):\n%s", diff)
	}
}

func TestRetrySendsNothingTheGateRefuses(t *testing.T) {
	var log []string
	m := llm.Retry(overloaded(&log), llm.RetryPolicy{MaxAttempts: 5, Sleep: func(context.Context, time.Duration) error { return nil }})
	refused := errors.New("the ledger is faulted")
	var final *llm.Message
	ctx := llm.WithAttempts(context.Background(), func(context.Context, int) (int, int, error) { return 0, 0, refused })
	msg := m.Stream(ctx, &llm.Request{}, func(ev llm.Event) {
		if ev.Type == llm.EventError {
			final = ev.Message
		}
	})
	if len(log) != 0 {
		t.Fatalf("sent %d requests although the first attempt could not be recorded", len(log))
	}
	if !msg.Failed() || final != msg {
		t.Fatalf("got %+v (final event %+v), want one failed message", msg, final)
	}
	// A retry the gate refuses is not sent either: the failure before it is the answer.
	log = nil
	calls := 0
	ctx = llm.WithAttempts(context.Background(), func(_ context.Context, try int) (int, int, error) {
		calls++
		if try > 1 {
			return 0, 0, refused
		}
		return 1, 5, nil
	})
	msg = m.Stream(ctx, &llm.Request{}, func(llm.Event) {})
	if len(log) != 1 || calls != 2 || msg.Err == nil || msg.Err.Kind != llm.KindOverloaded {
		t.Fatalf("sends %d, gate calls %d, final %+v; want one send and its failure", len(log), calls, msg.Err)
	}
}

func TestRetryWithoutGateCountsItsPolicy(t *testing.T) {
	var log []string
	m := llm.Retry(overloaded(&log), llm.RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
	m.Stream(context.Background(), &llm.Request{}, func(llm.Event) {})
	if len(log) != 3 {
		t.Fatalf("%d sends, want the policy's 3", len(log))
	}
}
