package script

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/llm"
)

func load(t *testing.T, file string) *Model {
	t.Helper()
	m, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func parse(t *testing.T, src string) *Model {
	t.Helper()
	m, err := Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// converse runs a conversation from prompt until the model stops calling tools, answering
// every tool call with "ok". It returns the final request's messages and the answers.
func converse(t *testing.T, m llm.Model, prompt string) (*llm.Request, []*llm.Message) {
	t.Helper()
	req := &llm.Request{Messages: []llm.Message{llm.UserText(prompt)}}
	var answers []*llm.Message
	for range 10 {
		r := record(t.Context(), m, req)
		checkStream(t, r)
		answers = append(answers, r.msg)
		if r.msg.Failed() || r.msg.StopReason != llm.StopToolUse {
			return req, answers
		}
		req.Messages = append(req.Messages, *r.msg)
		for _, c := range r.msg.ToolCalls() {
			req.Messages = append(req.Messages, llm.ToolResultText(c, "ok", false))
		}
	}
	t.Fatal("conversation did not end")
	return nil, nil
}

func TestSelectByMatchAndStep(t *testing.T) {
	m := load(t, "testdata/dialogs.yaml")
	_, answers := converse(t, m, "Please LIST THE FILES now")
	if len(answers) != 2 {
		t.Fatalf("answers = %d, want 2", len(answers))
	}
	if got := answers[0].Text(); got != "Listing." {
		t.Errorf("step 0 text = %q", got)
	}
	if calls := answers[0].ToolCalls(); len(calls) != 1 || *calls[0] != (llm.ToolCall{ID: "call_ls", Name: "ls", Arguments: `{"path":"."}`}) {
		t.Errorf("step 0 calls = %+v", calls)
	}
	if got := answers[1].Text(); got != "There are two files." || answers[1].StopReason != llm.StopEnd {
		t.Errorf("step 1 = %q stop %q", got, answers[1].StopReason)
	}

	// Another prompt falls through to the dialog without match.
	_, answers = converse(t, m, "What is the weather?")
	if len(answers) != 1 || answers[0].Text() != "I only know a few scripted prompts." {
		t.Errorf("fallback answers = %+v", answers)
	}

	// A new user message (a steer or follow-up) restarts the count at step 0 of its dialog.
	req, _ := converse(t, m, "list the files")
	req.Messages = append(req.Messages, llm.UserText("odd one"))
	r := record(t.Context(), m, req)
	checkStream(t, r)
	if calls := r.msg.ToolCalls(); len(calls) != 2 || calls[0].Name != "read" {
		t.Errorf("after a new user message: calls = %+v, want the odd dialog's step 0", calls)
	}
}

func TestLengthAndInvalidArgumentsAreVerbatim(t *testing.T) {
	m := load(t, "testdata/dialogs.yaml")
	r := record(t.Context(), m, requestAt("long", 0))
	checkStream(t, r)
	if r.msg.StopReason != llm.StopLength {
		t.Errorf("stop = %q, want length", r.msg.StopReason)
	}
	if got := r.msg.ToolCalls()[0].Arguments; got != `{"path":"a.txt","content":"abc` {
		t.Errorf("arguments = %q", got)
	}
	r = record(t.Context(), m, requestAt("odd", 0))
	checkStream(t, r)
	calls := r.msg.ToolCalls()
	if calls[0].Arguments != `{"path":"a.txt",}` || calls[1].Arguments != `{"command":"ls -la","timeout":10}` {
		t.Errorf("arguments = %q, %q", calls[0].Arguments, calls[1].Arguments)
	}
	if r.msg.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q, want toolUse", r.msg.StopReason)
	}
}

func TestSameRequestSameAnswer(t *testing.T) {
	m := load(t, "testdata/hello.yaml")
	req := requestAt("hi", 0)
	a := record(t.Context(), m, req)
	b := record(t.Context(), m, req)
	if diff := cmp.Diff(a.msg, b.msg); diff != "" {
		t.Errorf("answers differ:\n%s", diff)
	}
	if diff := cmp.Diff(a.events, b.events); diff != "" {
		t.Errorf("event streams differ:\n%s", diff)
	}
	// Default ids come from the request: stable for it, different for the next step's request.
	id := a.msg.ToolCalls()[0].ID
	if !strings.HasPrefix(id, "call_") {
		t.Errorf("default id = %q", id)
	}
	other := record(t.Context(), m, requestAt("hello", 0)).msg.ToolCalls()[0].ID
	if other == id {
		t.Errorf("two different conversations got the same default id %q", id)
	}
}

func TestFreshInstanceResumesMidConversation(t *testing.T) {
	m := load(t, "testdata/dialogs.yaml")
	req, answers := converse(t, m, "list the files")
	// req holds the conversation up to the last step; a new instance (a resumed process) must
	// give the same last answer.
	fresh := load(t, "testdata/dialogs.yaml")
	got := record(t.Context(), fresh, req).msg
	if diff := cmp.Diff(answers[len(answers)-1], got); diff != "" {
		t.Errorf("resumed answer differs (-original +resumed):\n%s", diff)
	}

	// Timestamps and failed attempts in the history change nothing.
	stamped := &llm.Request{Messages: append([]llm.Message(nil), req.Messages...)}
	for i := range stamped.Messages {
		stamped.Messages[i].Time = int64(1000 + i)
	}
	failed := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, Err: &llm.Error{Kind: llm.KindServer, Message: "x"},
		Content: []llm.Part{llm.Text("half")}}
	stamped.Messages = append(stamped.Messages, failed)
	if diff := cmp.Diff(got, record(t.Context(), fresh, stamped).msg); diff != "" {
		t.Errorf("timestamps or a failed attempt changed the answer:\n%s", diff)
	}
}

func TestNoScriptedAnswer(t *testing.T) {
	m := parse(t, `
version: 1
dialogs:
  - match: ^hello$
    turns:
      - text: hi
`)
	for _, c := range []struct {
		name string
		req  *llm.Request
		want []string
	}{
		{"no dialog matches", requestAt("goodbye", 0), []string{"test.yaml", "step 0", `"goodbye"`, "no dialog matches"}},
		{"dialog too short", requestAt("hello", 1), []string{"step 1", "1 assistant message", `"hello"`, "dialogs[0] (line 4", "1 turn"}},
		{"no user message", &llm.Request{}, []string{"no user message"}},
		{"nil request", nil, []string{"step 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := record(t.Context(), m, c.req)
			checkStream(t, r)
			e := r.msg.Err
			if r.msg.StopReason != llm.StopError || e == nil || e.Kind != llm.KindInvalid || e.Retryable {
				t.Fatalf("stop %q err %+v, want a terminal invalid error", r.msg.StopReason, e)
			}
			for _, w := range c.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q does not mention %q", e.Message, w)
				}
			}
		})
	}
	// A nil emit is tolerated.
	if msg := m.Stream(t.Context(), requestAt("hello", 0), nil); msg.Text() != "hi" {
		t.Errorf("nil emit: text %q", msg.Text())
	}
}

// instantSleep records retry waits without waiting.
type instantSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *instantSleep) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delays = append(s.delays, d)
	return ctx.Err()
}

func TestScriptedErrorsAndRetry(t *testing.T) {
	m := load(t, "testdata/dialogs.yaml")
	req := requestAt("flaky", 0)
	for attempt := 1; attempt <= 2; attempt++ {
		r := record(t.Context(), m, req)
		checkStream(t, r)
		e := r.msg.Err
		if e == nil || e.Kind != llm.KindRateLimit || !e.Retryable || e.Status != 429 || e.Message != "slow down" || e.RetryAfter() != 2*time.Second {
			t.Fatalf("attempt %d: err %+v, want a retryable 429 rate limit with retry-after 2s", attempt, e)
		}
	}
	if r := record(t.Context(), m, req); r.msg.Failed() || r.msg.Text() != "Third time lucky." {
		t.Fatalf("attempt 3: %+v", r.msg)
	}

	// Through llm.Retry, on a fresh instance: two retries honouring retry-after, then success.
	rec := &instantSleep{}
	retry := llm.Retry(load(t, "testdata/dialogs.yaml"), llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: time.Minute, Sleep: rec.sleep})
	r := record(t.Context(), retry, req)
	if r.msg.Failed() || r.msg.Text() != "Third time lucky." {
		t.Fatalf("through Retry: %+v", r.msg)
	}
	if !cmp.Equal(rec.delays, []time.Duration{2 * time.Second, 2 * time.Second}) {
		t.Errorf("retry waits = %v, want [2s 2s]", rec.delays)
	}

	// Attempts count per request: another conversation fails its own first attempts.
	other := requestAt("flaky again", 0)
	if r := record(t.Context(), m, other); !r.msg.Failed() {
		t.Errorf("another conversation's first attempt succeeded")
	}

	// An error without times fails every attempt, after its partial text.
	for range 3 {
		r := record(t.Context(), m, requestAt("broken", 0))
		checkStream(t, r)
		e := r.msg.Err
		if e == nil || e.Kind != llm.KindOverloaded || !e.Retryable || e.Status != 529 {
			t.Fatalf("broken: err %+v", e)
		}
		if got := r.msg.Text(); got != "I was about to" {
			t.Errorf("partial text = %q", got)
		}
		if last := r.events[len(r.events)-2]; last.Type != llm.EventTextDelta {
			t.Errorf("event before the error = %s, want a text delta (the block stays open)", last.Type)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	for _, def := range errorKinds {
		kind := def.kind
		m := parse(t, "version: 1\nturns:\n  - error: {kind: "+string(kind)+"}\n")
		r := record(t.Context(), m, requestAt("x", 0))
		checkStream(t, r)
		e := r.msg.Err
		if r.msg.StopReason != llm.StopError || e.Kind != kind || e.Retryable != def.retryable || e.Status != def.status || e.Message == "" {
			t.Errorf("%s: stop %q err %+v", kind, r.msg.StopReason, e)
		}
		if kind == llm.KindRateLimit || kind == llm.KindOverloaded || kind == llm.KindServer || kind == llm.KindNetwork ||
			kind == llm.KindTimeout || kind == llm.KindIncompleteStream {
			if !e.Retryable {
				t.Errorf("%s is not retryable", kind)
			}
		} else if e.Retryable {
			t.Errorf("%s is retryable", kind)
		}
	}
	m := parse(t, "version: 1\nturns:\n  - error: {kind: server, status: 503, message: down for maintenance}\n")
	if e := record(t.Context(), m, requestAt("x", 0)).msg.Err; e.Status != 503 || e.Message != "down for maintenance" {
		t.Errorf("err = %+v", e)
	}
}

const slowScript = `
version: 1
turns:
  - text: one two three
    calls: [{name: ls, id: c1, args: {path: .}}]
    delay: 1h
  - error: {kind: server, partial: "so far"}
    delay: 1h
`

func TestDelayIsCancellable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := parse(t, slowScript)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			time.Sleep(150 * time.Minute) // during the wait before the second delta
			cancel()
		}()
		start := time.Now()
		r := record(ctx, m, requestAt("x", 0))
		checkStream(t, r)
		if r.msg.StopReason != llm.StopAborted || r.msg.Err == nil || r.msg.Err.Kind != llm.KindAborted {
			t.Fatalf("stop %q err %+v, want aborted", r.msg.StopReason, r.msg.Err)
		}
		if got := r.msg.Text(); got != "one " {
			t.Errorf("partial text = %q, want %q", got, "one ")
		}
		if d := time.Since(start); d != 150*time.Minute {
			t.Errorf("returned after %v, want at the cancellation (150m)", d)
		}
	})
}

func TestDelayRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := parse(t, slowScript)
		start := time.Now()
		r := record(t.Context(), m, requestAt("x", 0))
		checkStream(t, r)
		if r.msg.Failed() {
			t.Fatalf("failed: %+v", r.msg.Err)
		}
		// Every event after start waits the delay once.
		if d, want := time.Since(start), time.Duration(len(r.events)-1)*time.Hour; d != want {
			t.Errorf("took %v, want %v (%d events after start)", d, want, len(r.events)-1)
		}

		// A deadline is not a cancellation: it ends as a retryable network timeout.
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Minute)
		defer cancel()
		r = record(ctx, m, requestAt("x", 1))
		checkStream(t, r)
		if r.msg.StopReason != llm.StopError || r.msg.Err.Kind != llm.KindNetwork || !r.msg.Err.Retryable {
			t.Errorf("deadline: stop %q err %+v, want a retryable network error", r.msg.StopReason, r.msg.Err)
		}
	})
}

func TestCancelDuringEmit(t *testing.T) {
	m := load(t, "testdata/hello.yaml")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var r recording
	r.msg = m.Stream(ctx, requestAt("x", 1), func(ev llm.Event) {
		r.events = append(r.events, ev)
		if ev.Type == llm.EventTextDelta {
			cancel()
		}
	})
	checkStream(t, r)
	if r.msg.StopReason != llm.StopAborted || r.msg.Text() != "Done. " {
		t.Errorf("stop %q text %q, want aborted after the first delta", r.msg.StopReason, r.msg.Text())
	}

	// Already cancelled: aborted at once, and no attempt of a failing turn is spent.
	flaky := load(t, "testdata/dialogs.yaml")
	if r := record(ctx, flaky, requestAt("flaky", 0)); r.msg.StopReason != llm.StopAborted {
		t.Errorf("cancelled context: stop %q", r.msg.StopReason)
	}
	for i := range 2 {
		if r := record(t.Context(), flaky, requestAt("flaky", 0)); !r.msg.Failed() {
			t.Errorf("attempt %d after a cancelled one succeeded: the cancelled call was counted", i+1)
		}
	}
}

func TestChunking(t *testing.T) {
	m := parse(t, `
version: 1
turns:
  - thinking: "Let me think."
    text: "  Hello,  wörld!\nNext line "
    calls:
      - name: write
        args: {path: dir/file.go, content: "package main\n// ünïcödé ünïcödé ünïcödé ünïcödé ünïcödé\n"}
`)
	r := record(t.Context(), m, requestAt("x", 0))
	checkStream(t, r)
	var text []string
	counts := map[llm.EventType]int{}
	for _, ev := range r.events {
		counts[ev.Type]++
		if !utf8.ValidString(ev.Delta) {
			t.Errorf("%s delta %q is not valid UTF-8", ev.Type, ev.Delta)
		}
		if ev.Type == llm.EventTextDelta {
			text = append(text, ev.Delta)
		}
	}
	if !cmp.Equal(text, []string{"  Hello,  ", "wörld!\n", "Next ", "line "}) {
		t.Errorf("text deltas = %q", text)
	}
	if counts[llm.EventThinkingDelta] != 3 {
		t.Errorf("thinking deltas = %d, want 3", counts[llm.EventThinkingDelta])
	}
	if n := counts[llm.EventToolCallDelta]; n < 5 || n > 9 {
		t.Errorf("toolcall deltas = %d, want a few (5 to 9)", n)
	}
}

func TestEmptyText(t *testing.T) {
	m := parse(t, "version: 1\nturns:\n  - text: \"\"\n")
	r := record(t.Context(), m, requestAt("x", 0))
	checkStream(t, r)
	if len(r.msg.Content) != 1 || !cmp.Equal(r.msg.Content[0], llm.Text("")) || r.msg.StopReason != llm.StopEnd {
		t.Errorf("content %+v stop %q", r.msg.Content, r.msg.StopReason)
	}
}

func TestNameAndPricing(t *testing.T) {
	m := load(t, "testdata/hello.yaml")
	if m.Name() != "script-hello" {
		t.Errorf("name = %q", m.Name())
	}
	p := llm.Pricing{Input: 1e6, Output: 2e6}
	n := m.WithName("other").WithPricing(p)
	msg := record(t.Context(), n, requestAt("x", 0)).msg
	if msg.Model != "other" {
		t.Errorf("model = %q", msg.Model)
	}
	if c := msg.Usage.Cost; c.Input != 120 || c.Output != 60 || c.Total != 180 {
		t.Errorf("cost = %+v, want input 120 output 60", c)
	}
	if m.Name() != "script-hello" || m.Pricing() == p {
		t.Errorf("WithName/WithPricing changed the original")
	}
	plain := parse(t, "version: 1\nturns: [{text: hi, usage: {input: 5}}]\n")
	msg = record(t.Context(), plain, requestAt("x", 0)).msg
	if plain.Name() != DefaultName || msg.Model != DefaultName || msg.Usage.Cost != (llm.Cost{}) || msg.Usage.Input != 5 {
		t.Errorf("defaults: name %q model %q usage %+v", plain.Name(), msg.Model, msg.Usage)
	}
}

func TestConcurrentUse(t *testing.T) {
	m := load(t, "testdata/dialogs.yaml")
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range 8 {
		wg.Go(func() {
			r := record(context.Background(), m, requestAt("flaky", 0))
			if r.msg.Failed() {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != 2 {
		t.Errorf("%d of 8 concurrent attempts failed, want exactly 2 (times: 2)", failed)
	}
}

// TestArgsCarryCaptures: ${name} in a call's args is the named group's text from the user
// message, escaped as JSON; an unknown name stays literal, and a later step of the dialog
// (after tool results) still expands from the same user message.
func TestArgsCarryCaptures(t *testing.T) {
	m := parse(t, `version: 1
dialogs:
  - match: 'digest: (?P<digest>\S+) note: (?P<note>.*)'
    turns:
      - calls:
          - name: submit
            args: {digest: "${digest}", note: "said ${note}", other: "${missing}"}
      - calls:
          - name: again
            args: {d: "${digest}"}
      - text: done
`)
	_, answers := converse(t, m, `digest: sha256:ab12 note: a "quoted" \ line`)
	if len(answers) != 3 {
		t.Fatalf("%d answers", len(answers))
	}
	got := answers[0].ToolCalls()[0].Arguments
	want := `{"digest":"sha256:ab12","note":"said a \"quoted\" \\ line","other":"${missing}"}`
	if got != want {
		t.Fatalf("args = %s, want %s", got, want)
	}
	if got := answers[1].ToolCalls()[0].Arguments; got != `{"d":"sha256:ab12"}` {
		t.Fatalf("second step args = %s", got)
	}
}
