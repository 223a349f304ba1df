package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// crashAtAttempt stops the run (as a crash would) when the kernel asks to record try `at` of
// a model call: that try is neither recorded nor sent.
type crashAtAttempt struct {
	*session.Session
	at int
}

func (c *crashAtAttempt) Attempt(ctx context.Context, intent string, try int) (int, int, error) {
	if try == c.at {
		return 0, 0, errStopped
	}
	return c.Session.Attempt(ctx, intent, try)
}

// overloadedAgent runs an agent whose model always answers 529 (retried without waiting under
// a local policy of 9 attempts, more than the session's) and counts the requests it sends.
func overloadedAgent(t *testing.T, rec kernel.Recorder, sent *int) *kernel.Agent {
	t.Helper()
	model := llm.ModelFunc(func(context.Context, *llm.Request, func(llm.Event)) *llm.Message {
		*sent++
		return llm.Fail(&llm.Message{}, &llm.Error{Kind: llm.KindOverloaded, Status: 529, Message: "overloaded", Retryable: true})
	})
	set, err := tool.New()
	if err != nil {
		t.Fatal(err)
	}
	a, err := kernel.New(kernel.Config{Model: llm.Retry(model, llm.RetryPolicy{MaxAttempts: 9,
		Sleep: func(context.Context, time.Duration) error { return nil }}), Tools: set, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAttemptsAreCountedAcrossReopen: a model call's attempts — the first of each process (its
// intent) and every retry within one (an attempt record) — are counted from the ledger, so a
// call crashed after three attempts gets only the two its recorded policy has left, and then
// stays given up, in this process and the next, whatever policy they run with; only a new
// prompt starts a new call.
func TestAttemptsAreCountedAcrossReopen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	opts := session.Options{Retry: session.RetryPolicy{MaxAttempts: 5}}
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: t.TempDir()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	must(t, s.BeginRun())
	_, err = overloadedAgent(t, &crashAtAttempt{Session: s, at: 4}, &sent).Run(ctx, nil, llm.UserText("go"))
	if !errors.Is(err, errStopped) || sent != 3 {
		t.Fatalf("first process: %d requests, ended with %v; want 3 and the crash", sent, err)
	}
	must(t, s.Close())

	// The next process recovers the open call (3 of 5 made) and finishes it: two more requests.
	s, _, err = session.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := s.Recover(ctx, nil)
	if err != nil || len(acts) == 0 || acts[0].Action != session.Retry {
		t.Fatalf("recovery: %v (%v), want the model call retried", acts, err)
	}
	must(t, s.BeginRun())
	out, err := overloadedAgent(t, s, &sent).Continue(ctx, s.Context())
	var me *kernel.ModelError
	if !errors.As(err, &me) || me.Err.Kind != llm.KindOverloaded || sent != 5 {
		t.Fatalf("second process: %d requests in all, ended with %v; want 5 and the 529", sent, err)
	}
	must(t, s.EndRun(string(out.Status)))
	if gu, ok := errors.AsType[*kernel.GaveUpError](s.GaveUp()); !ok || gu.Attempts != 5 || gu.MaxAttempts != 5 || gu.Last == nil || gu.Last.Status != 529 {
		t.Fatalf("GaveUp() = %v, want 5 of 5 with the last 529", s.GaveUp())
	}
	must(t, s.Close())

	// A third process with a larger policy still finds it given up and sends nothing.
	s, _, err = session.Open(dir, session.Options{Retry: session.RetryPolicy{MaxAttempts: 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if acts, err := s.Recover(ctx, nil); err != nil || len(acts) != 0 {
		t.Fatalf("recovery of a closed call did %v (%v)", acts, err)
	}
	head, _ := s.Head()
	must(t, s.BeginRun())
	_, err = overloadedAgent(t, s, &sent).Continue(ctx, s.Context())
	if !errors.As(err, &me) || !strings.Contains(me.Err.Message, "gave up after 5 attempts") || me.Err.Status != 529 || sent != 5 {
		t.Fatalf("continuing the given-up call: %d requests in all, ended with %v", sent, err)
	}
	if after, _ := s.Head(); after != head+1 { // the run's start only: no intent
		t.Errorf("the refused call wrote %d records", after-head-1)
	}
	must(t, s.EndRun("failed"))

	// A new prompt is a new logical call, under the policy in force now.
	_, err = overloadedAgent(t, &crashAtAttempt{Session: s, at: 2}, &sent).Run(ctx, s.Context(), llm.UserText("try again"))
	if !errors.Is(err, errStopped) || sent != 6 {
		t.Fatalf("new prompt: %d requests in all, ended with %v; want one more", sent, err)
	}
	st, _, err := session.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var last *session.Intent
	for _, in := range st.Intents {
		if last == nil || in.Seq > last.Seq {
			last = in
		}
	}
	if last.Attempt != 1 || last.Retry.MaxAttempts != 10 {
		t.Errorf("the new call's intent: attempt %d of %d, want 1 of 10", last.Attempt, last.Retry.MaxAttempts)
	}
	if _, err := ledger.Verify(dir, ledger.Options{}); err != nil {
		t.Errorf("the ledger does not verify: %v", err)
	}
}

// TestAttemptRecordsAreChecked: an attempt record must continue the count of an open model
// call; a write that would break that is refused and leaves the ledger as it was.
func TestAttemptRecordsAreChecked(t *testing.T) {
	ctx := context.Background()
	s, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Meta{ID: "s", Cwd: t.TempDir()},
		session.Options{Retry: session.RetryPolicy{MaxAttempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must(t, s.Settle(ctx, kernel.Settlement{Entries: []kernel.Entry{{ID: "u1", Message: llm.UserText("go")}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "t1", Kind: kernel.IntentToolCall, Reserved: []string{"r1"}, Call: &llm.ToolCall{ID: "c", Name: "ls"}}))
	head, _ := s.Head()
	if _, _, err := s.Attempt(ctx, "t1", 2); !errors.Is(err, session.ErrInvalidRecord) {
		t.Errorf("attempt of a tool call: %v, want ErrInvalidRecord", err)
	}
	must(t, s.Intend(ctx, kernel.Intent{ID: "m1", Kind: kernel.IntentModelCall, Reserved: []string{"a1"}}))
	if n, limit, err := s.Attempt(ctx, "m1", 1); err != nil || n != 1 || limit != 2 {
		t.Errorf("try 1 is the intent: %d of %d (%v)", n, limit, err)
	}
	if n, _, err := s.Attempt(ctx, "m1", 2); err != nil || n != 2 {
		t.Errorf("try 2: attempt %d (%v)", n, err)
	}
	head2, _ := s.Head()
	if _, _, err := s.Attempt(ctx, "m1", 3); !errors.As(err, new(*kernel.GaveUpError)) {
		t.Errorf("a third attempt of two: %v, want a GaveUpError", err)
	}
	if after, _ := s.Head(); after != head2 || head2 != head+2 {
		t.Errorf("records written: head %d → %d → %d", head, head2, after)
	}
}
