package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
)

const twoTurns = `
version: 1
turns:
  - text: Writing.
    calls:
      - {name: write, id: w1, args: {path: a.txt, content: "A\n"}}
      - {name: read, id: r1, args: {path: missing.txt}}
    usage: {input: 10, output: 5}
  - text: done
    usage: {input: 20, output: 2}
`

func newAgent(t testing.TB, dir, scenario string, rec kernel.Recorder) *kernel.Agent {
	t.Helper()
	model, err := script.Parse([]byte(scenario), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := tool.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	set, err := tool.New(fstool.All(ws)...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRoundTrip(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s1")
	s, err := session.Create(dir, session.Meta{ID: "s1", Cwd: ws}, session.Options{Retry: session.RetryPolicy{MaxAttempts: 3}})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, ws, twoTurns, s)
	if err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EndRun(string(out.Status)); err != nil {
		t.Fatal(err)
	}
	live := s.Context()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	if diff := cmp.Diff(stripTimes(out.Messages), stripTimes(live)); diff != "" {
		t.Errorf("session context differs from the run (-run +session):\n%s", diff)
	}
	s2, rep, err := session.Open(dir, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if rep.Torn != nil {
		t.Errorf("a clean file reported a torn tail")
	}
	if diff := cmp.Diff(stripTimes(live), stripTimes(s2.Context())); diff != "" {
		t.Errorf("reopened context differs:\n%s", diff)
	}
	if s2.Pending() {
		t.Error("a completed session reports pending work")
	}
	if acts, err := s2.Recover(context.Background(), nil); err != nil || len(acts) != 0 {
		t.Errorf("recovering a clean session did %v (%v)", acts, err)
	}
	if u := s2.Usage(); u.Input != 30 || u.Output != 7 {
		t.Errorf("usage %+v", u)
	}
	// The conversation continues where it left off.
	a2 := newAgent(t, ws, "version: 1\nturns:\n  - text: again\n", s2)
	if _, err := a2.Run(context.Background(), s2.Context(), llm.UserText("more")); err != nil {
		t.Fatal(err)
	}
	ctx := s2.Context()
	if len(ctx) != len(live)+2 || ctx[len(ctx)-1].Text() != "again" {
		t.Errorf("continued context has %d messages, last %q", len(ctx), ctx[len(ctx)-1].Text())
	}
}

func stripTimes(ms []llm.Message) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i, m := range ms {
		m.Time = 0
		out[i] = m
	}
	return out
}

// rec wraps a session and stops the run (as a crash would) once it has recorded n writes: the
// remaining records never reach the ledger.
type stopAfter struct {
	*session.Session
	n int
}

var errStopped = errors.New("simulated crash")

func (r *stopAfter) Intend(ctx context.Context, in kernel.Intent) error {
	if r.n--; r.n < 0 {
		return errStopped
	}
	return r.Session.Intend(ctx, in)
}

func (r *stopAfter) Settle(ctx context.Context, s kernel.Settlement) error {
	if r.n--; r.n < 0 {
		return errStopped
	}
	return r.Session.Settle(ctx, s)
}

type replayer struct {
	safe map[string]bool
	runs []string
}

func (r *replayer) ReplaySafe(name string) bool { return r.safe[name] }
func (r *replayer) Replay(_ context.Context, c *llm.ToolCall) llm.Message {
	r.runs = append(r.runs, c.ID)
	return llm.ToolResultText(c, "replayed "+c.ID, false)
}

func TestRecoverySettlesEveryOpenIntentOnce(t *testing.T) {
	// Writes of twoTurns: prompt, model intent, model entry, 2 tool intents, 2 tool entries, ...
	for _, tc := range []struct {
		writes   int
		safe     bool
		want     []string // actions
		alt      []string // another acceptable outcome
		replayed []string
	}{
		{writes: 1, want: []string{"run-closed"}},                      // prompt only
		{writes: 2, want: []string{"model_call: retry", "run-closed"}}, // model call in flight
		{writes: 3, want: []string{"tool_call call w1 (write): not-started", "tool_call call r1 (read): not-started", "run-closed"}},
		{writes: 5, want: []string{"tool_call call w1 (write): interrupted", "tool_call call r1 (read): interrupted", "run-closed"}},
		{writes: 5, safe: true, want: []string{"tool_call call w1 (write): interrupted", "tool_call call r1 (read): replayed", "run-closed"}, replayed: []string{"r1"}},
		// The two calls run in parallel: either may settle first.
		{writes: 6, want: []string{"tool_call call r1 (read): interrupted", "run-closed"},
			alt: []string{"tool_call call w1 (write): interrupted", "run-closed"}},
	} {
		ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
		s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{Retry: session.RetryPolicy{MaxAttempts: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.BeginRun(); err != nil {
			t.Fatal(err)
		}
		a := newAgent(t, ws, twoTurns, &stopAfter{Session: s, n: tc.writes})
		if _, err := a.Run(context.Background(), nil, llm.UserText("go")); !errors.Is(err, errStopped) {
			t.Fatalf("writes=%d: run ended with %v", tc.writes, err)
		}
		s.Close()

		s, _, err = session.Open(dir, session.Options{Retry: session.RetryPolicy{MaxAttempts: 2}})
		if err != nil {
			t.Fatal(err)
		}
		rp := &replayer{safe: map[string]bool{"read": tc.safe, "write": tc.safe}}
		acts, err := s.Recover(context.Background(), rp)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range acts {
			got = append(got, a.String())
		}
		if tc.alt != nil && cmp.Equal(tc.alt, got) {
			got = tc.want
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("writes=%d safe=%v: actions (-want +got):\n%s", tc.writes, tc.safe, diff)
		}
		if diff := cmp.Diff(tc.replayed, rp.runs); diff != "" {
			t.Errorf("writes=%d: replayed (-want +got):\n%s", tc.writes, diff)
		}
		data, _ := os.ReadFile(filepath.Join(dir, "ledger.jsonl"))
		if acts, err := s.Recover(context.Background(), rp); err != nil || len(acts) != 0 {
			t.Errorf("writes=%d: second recovery did %v (%v)", tc.writes, acts, err)
		}
		again, _ := os.ReadFile(filepath.Join(dir, "ledger.jsonl"))
		if string(again) != string(data) {
			t.Errorf("writes=%d: second recovery changed the ledger", tc.writes)
		}
		// Every tool call in the context now has exactly one result.
		checkOneResultPerCall(t, s.Context())
		s.Close()
	}
}

func checkOneResultPerCall(t *testing.T, msgs []llm.Message) {
	t.Helper()
	results := map[string]int{}
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			results[m.ToolCallID]++
		}
	}
	for _, m := range msgs {
		for _, c := range m.ToolCalls() {
			if results[c.ID] != 1 {
				t.Errorf("call %s has %d results", c.ID, results[c.ID])
			}
		}
	}
}

func TestModelCallRetriedUnderRecordedPolicyThenGivesUp(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{Retry: session.RetryPolicy{MaxAttempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s.BeginRun()
	crash := func(sess *session.Session, n int) {
		a := newAgent(t, ws, twoTurns, &stopAfter{Session: sess, n: n})
		msgs := sess.Context()
		var err error
		if len(msgs) == 0 {
			_, err = a.Run(context.Background(), nil, llm.UserText("go"))
		} else {
			_, err = a.Continue(context.Background(), msgs)
		}
		if !errors.Is(err, errStopped) {
			t.Fatalf("run: %v", err)
		}
	}
	crash(s, 2) // prompt + model intent, then crash
	for i, want := range []string{"retry", "gave-up"} {
		acts, err := s.Recover(context.Background(), nil)
		if err != nil || len(acts) == 0 || acts[0].Action != want {
			t.Fatalf("recovery %d: %v %v, want %s first", i+1, acts, err, want)
		}
		if want == "retry" {
			s.BeginRun()
			crash(s, 1) // the retried model call's intent, then crash
		}
	}
	ctx := s.Context()
	last := ctx[len(ctx)-1]
	if !last.Failed() || !strings.Contains(last.Err.Message, "2 attempts made; its retry policy allows 2") {
		t.Errorf("last message %+v, want the synthetic give-up error", last)
	}
	// It stays given up, also after a reopen: no third attempt is announced.
	s.Close()
	s, _, err = session.Open(dir, session.Options{Retry: session.RetryPolicy{MaxAttempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := errors.AsType[*kernel.GaveUpError](s.GaveUp()); !ok {
		t.Errorf("GaveUp() = %v after reopening, want a GaveUpError", s.GaveUp())
	}
	err = s.Intend(context.Background(), kernel.Intent{ID: "again", Kind: kernel.IntentModelCall, Reserved: []string{"a-again"}})
	if gu, ok := errors.AsType[*kernel.GaveUpError](err); !ok || gu.Attempts != 2 || gu.Last == nil {
		t.Errorf("a third attempt was not refused: %v", err)
	}
	if s.Has("again") {
		t.Error("the refused intent was recorded")
	}
}

func TestCancelIsDurableAndClosesAsAborted(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.BeginRun()
	a := newAgent(t, ws, twoTurns, &stopAfter{Session: s, n: 5}) // both tool intents written
	a.Run(context.Background(), nil, llm.UserText("go"))
	if err := s.Cancel("user pressed ctrl-c"); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel("again"); err != nil { // idempotent: nothing left to cancel
		t.Fatal(err)
	}
	s.Close()
	s, _, err = session.Open(dir, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	acts, err := s.Recover(context.Background(), &replayer{safe: map[string]bool{"read": true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, act := range acts[:2] {
		if act.Action != session.Aborted {
			t.Errorf("%v, want aborted (a cancelled call is never replayed)", act)
		}
	}
}

func TestDeferredFactsApplyAtTheTurnBoundary(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.BeginRun()
	var seenDuringTurn string
	model, _ := script.Parse([]byte(twoTurns), "s.yaml")
	calls := 0
	wrapped := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		calls++
		if calls == 1 {
			s.SetFact("name", "renamed mid-turn")
			seenDuringTurn = s.Fact("name")
		}
		return model.Stream(ctx, req, emit)
	})
	set, _ := tool.New()
	a, _ := kernel.New(kernel.Config{Model: wrapped, Tools: set, Recorder: s})
	a.Run(context.Background(), nil, llm.UserText("go"))
	if seenDuringTurn != "" {
		t.Errorf("a fact set mid-turn was visible before the turn boundary: %q", seenDuringTurn)
	}
	if got := s.Fact("name"); got != "renamed mid-turn" {
		t.Errorf("after the boundary the fact is %q", got)
	}
}

func TestTamperedSessionFailsClosed(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.BeginRun()
	newAgent(t, ws, twoTurns, s).Run(context.Background(), nil, llm.UserText("go"))
	s.EndRun("completed")
	s.Close()
	// A second open run in the same lane is a state no single writer produces.
	s, _, _ = session.Open(dir, session.Options{})
	s.BeginRun()
	if err := s.BeginRun(); !errors.Is(err, session.ErrBusy) {
		t.Errorf("second BeginRun: %v, want ErrBusy", err)
	}
	s.Close()
	// Byte-level tampering is the ledger's to catch; the session reports it unchanged.
	path := filepath.Join(dir, "ledger.jsonl")
	data, _ := os.ReadFile(path)
	tampered := strings.Replace(string(data), `"text":"done"`, `"text":"DONE"`, 1)
	os.WriteFile(path, []byte(tampered), 0o644)
	_, _, err = session.Open(dir, session.Options{})
	var ce *ledger.CorruptError
	if !errors.As(err, &ce) || ce.Seq == 0 {
		t.Errorf("tampered session opened: %v", err)
	}
}

// TestMessageEncodingIsPinned guards the on-disk message format (FormatVersion 1): a change to
// llm.Message's JSON encoding must come with a new format version.
func TestMessageEncodingIsPinned(t *testing.T) {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("hmm"), llm.Text("hi"), llm.Call("c1", "read", `{"path":"a"}`)},
		Provider: "p", API: "a", Model: "m", Usage: &llm.Usage{Input: 1, Output: 2}, StopReason: llm.StopToolUse, Time: 5}
	got, _ := json.Marshal(m)
	want := `{"role":"assistant","content":[{"type":"thinking","text":"hmm"},{"type":"text","text":"hi"},{"type":"toolCall","call":{"id":"c1","name":"read","arguments":"{\"path\":\"a\"}"}}],"provider":"p","api":"a","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","ts":5}`
	if string(got) != want {
		t.Errorf("llm.Message encoding changed; bump session.FormatVersion and migrate.\n got %s\nwant %s", got, want)
	}
}
