package llmtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// APIKey is the key the suite passes to Harness.New. It must never appear in an error message.
const APIKey = "sk-llmtest-SECRET-0123456789"

// Case names. Each documents what its fixture must encode; the suite checks exactly that.
const (
	// CaseText: text "Hello, world!" in at least two deltas; stop reason stop; usage input 12,
	// output 5.
	CaseText = "text"
	// CaseThinking: a thinking block "Let me think." (at least two deltas), then text "Done.";
	// stop reason stop. Harnesses whose wire has no readable thinking return ok=false.
	CaseThinking = "thinking"
	// CaseToolCalls: text "Looking." then two tool calls, in this order:
	// id "call_1" name "read" arguments {"path":"a.txt"}, and id "call_2" name "bash" arguments
	// {"command":"ls -la"}; stop reason toolUse. Arguments are compared as JSON values.
	CaseToolCalls = "tool_calls"
	// CaseSplitArgs: one tool call id "call_9" name "write" whose arguments
	// {"path":"dir/file.go","content":"package main\n"} arrive in at least five deltas;
	// stop reason toolUse.
	CaseSplitArgs = "split_args"
	// CaseUsage: text "ok"; usage input 100, output 20, cacheRead 50 and — when the harness
	// reports cache writes — cacheWrite 30. For wires that count cached tokens inside the prompt
	// total (OpenAI), the prompt total is 150 (or 180 with writes) and the adapter subtracts.
	CaseUsage = "usage"
	// CaseNoUsage: text "ok" and no usage at all in the stream; the adapter reports zero usage
	// and stop reason stop, not an error.
	CaseNoUsage = "no_usage"
	// CaseLength: text "Writing." then tool call id "call_3" name "write" whose arguments stop
	// half way at {"path":"a.txt","content":"abc ; stop reason length. The adapter keeps the
	// half-written arguments verbatim.
	CaseLength = "length"
	// CaseInvalidArgs: tool call id "call_4" name "read" with arguments {"path":"a.txt",}
	// (invalid JSON); stop reason toolUse. The adapter keeps them verbatim and does not fail.
	CaseInvalidArgs = "invalid_args"
	// CaseRateLimit: an HTTP 429 answer with header retry-after: 2 and the provider's error
	// body, then the CaseText stream.
	CaseRateLimit = "rate_limit"
	// CaseServerError: an HTTP 500 answer with the provider's error body, then the CaseText
	// stream.
	CaseServerError = "server_error"
	// CaseOverloaded: a 200 stream that sends some text and then the provider's overloaded
	// error event mid-stream, then (second response) the CaseText stream.
	CaseOverloaded = "overloaded"
	// CaseCut: a 200 stream whose connection is cut mid-stream (use Response.CutAfter), then
	// the CaseText stream. The cut is a retryable incomplete stream.
	CaseCut = "cut"
	// CaseCutMidEvent: a 200 stream whose body ends cleanly (no connection error) in the
	// middle of an event, after some text and before the wire's terminal event, then the
	// CaseText stream. The adapter fails with a retryable incomplete stream.
	CaseCutMidEvent = "cut_mid_event"
	// CaseNoTerminal: a 200 stream that sends text "Hel" and ends cleanly at an event boundary
	// without the wire's terminal event (Chat Completions: no finish_reason and no [DONE];
	// Anthropic: no message_stop; Responses: no response.completed), then the CaseText stream.
	// The adapter fails with a retryable incomplete stream.
	CaseNoTerminal = "no_terminal"
	// CaseIdle: a 200 stream that sends text "Hel" and then nothing (Response.Hang), then the
	// CaseText stream. The suite builds the model with a tiny idle timeout; the adapter gives
	// up with a retryable incomplete stream.
	CaseIdle = "idle"
	// CaseNoHeaders: an answer that never sends its headers (Response.Stall), then the
	// CaseText stream. The suite builds the model with a tiny header timeout; the adapter gives
	// up with a retryable timeout.
	CaseNoHeaders = "no_headers"
	// CaseAuth: an HTTP 401 answer with the provider's error body.
	CaseAuth = "auth"
	// CaseHang: a 200 stream that sends text "Hel" and then hangs (Response.Hang); the suite
	// cancels the context after the first text delta.
	CaseHang = "hang"
)

// Response is one scripted HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   string
	// CutAfter > 0 writes only that many bytes of Body, then closes the connection abruptly.
	CutAfter int
	// Hang keeps the response open after Body until the client goes away.
	Hang bool
	// Stall sends nothing, not even the headers, until the client goes away.
	Stall bool
}

// Harness connects the suite to one adapter.
type Harness struct {
	// New returns the adapter under test, pointed at baseURL, authenticating with apiKey, with
	// the header and idle timeouts l (zero fields: the defaults).
	New func(baseURL, apiKey string, l watchdog.Limits) llm.Model
	// Fixture returns the responses for a case, one per HTTP request, or ok=false when the
	// case does not apply to this wire (the suite skips it, naming the reason).
	Fixture func(name string) (rs []Response, ok bool)
	// CacheWrite says whether the wire reports cache writes (CaseUsage).
	CacheWrite bool
	// CheckRequest, if set, inspects the body of the first request of each case.
	CheckRequest func(t *testing.T, r *http.Request, body []byte)
}

// server replays responses and records requests.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	rs       []Response
	requests []recorded
}

type recorded struct {
	r    *http.Request
	body []byte
}

func newServer(t *testing.T, rs []Response) *server {
	s := &server{rs: rs}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, recorded{r, body})
		s.mu.Unlock()
		if n >= len(s.rs) {
			http.Error(w, `{"error":"llmtest: no more scripted responses"}`, http.StatusTeapot)
			return
		}
		resp := s.rs[n]
		if resp.Stall {
			waitGone(t, r)
			return
		}
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if w.Header().Get("Content-Type") == "" {
			if resp.Status == 0 || resp.Status == 200 {
				w.Header().Set("Content-Type", "text/event-stream")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
		}
		status := resp.Status
		if status == 0 {
			status = 200
		}
		if resp.CutAfter > 0 {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, resp.Body[:min(resp.CutAfter, len(resp.Body))])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, resp.Body)
		w.(http.Flusher).Flush()
		if resp.Hang {
			waitGone(t, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// waitGone waits until the client abandons r, at most 30 seconds.
func waitGone(t *testing.T, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
		t.Errorf("llmtest: a silent response was never abandoned by the client")
	}
}

// tiny are the timeouts of the cases that wait for them to fire.
var tiny = watchdog.Limits{Header: 50 * time.Millisecond, Idle: 50 * time.Millisecond}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Request is the request every case sends: a system prompt, a short history with a tool round
// trip, and two tools.
func Request() *llm.Request {
	schema := []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)
	return &llm.Request{
		System: "You are a test.",
		Messages: []llm.Message{
			llm.UserText("List the files."),
			{Role: llm.RoleAssistant, Provider: "llmtest", Model: "m", StopReason: llm.StopToolUse,
				Content: []llm.Part{llm.Text("Checking."), llm.Call("call_0", "ls", `{"path":"."}`)}},
			llm.ToolResultText(&llm.ToolCall{ID: "call_0", Name: "ls"}, "a.txt\nb.txt", false),
			llm.UserText("Now read a.txt."),
		},
		Tools: []llm.ToolSpec{
			{Name: "read", Description: "Read a file.", Schema: schema},
			{Name: "ls", Description: "List a directory.", Schema: schema},
		},
		MaxTokens: 1024,
	}
}

// result is one streamed call.
type result struct {
	msg    *llm.Message
	events []llm.Event
}

func stream(ctx context.Context, m llm.Model, onEvent func(llm.Event)) result {
	var r result
	r.msg = m.Stream(ctx, Request(), func(ev llm.Event) {
		r.events = append(r.events, ev)
		if onEvent != nil {
			onEvent(ev)
		}
	})
	return r
}

// instantSleep records retry waits without waiting.
type instantSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *instantSleep) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Run runs every case against h.
func Run(t *testing.T, h Harness) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, ok := h.Fixture(c.name)
			if !ok {
				t.Skipf("case %s does not apply to this wire", c.name)
			}
			srv := newServer(t, rs)
			model := h.New(srv.URL, APIKey, c.limits)
			c.run(t, h, srv, model)
			if h.CheckRequest != nil && srv.count() > 0 {
				srv.mu.Lock()
				first := srv.requests[0]
				srv.mu.Unlock()
				h.CheckRequest(t, first.r, first.body)
			}
		})
	}
}

type testCase struct {
	name   string
	run    func(t *testing.T, h Harness, srv *server, m llm.Model)
	limits watchdog.Limits
}

var cases = []testCase{
	{name: CaseText, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopEnd)
		wantText(t, r.msg, "Hello, world!")
		if n := countEvents(r, llm.EventTextDelta); n < 2 {
			t.Errorf("text_delta events = %d, want at least 2", n)
		}
		wantUsage(t, r.msg, llm.Usage{Input: 12, Output: 5})
	}},
	{name: CaseThinking, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopEnd)
		var thinking string
		for _, p := range r.msg.Content {
			if p.Type == llm.PartThinking {
				thinking += p.Text
			}
		}
		if thinking != "Let me think." {
			t.Errorf("thinking = %q, want %q", thinking, "Let me think.")
		}
		if n := countEvents(r, llm.EventThinkingDelta); n < 2 {
			t.Errorf("thinking_delta events = %d, want at least 2", n)
		}
		wantText(t, r.msg, "Done.")
		if r.msg.Content[0].Type != llm.PartThinking {
			t.Errorf("first part is %s, want thinking", r.msg.Content[0].Type)
		}
	}},
	{name: CaseToolCalls, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopToolUse)
		wantText(t, r.msg, "Looking.")
		wantCalls(t, r.msg, []llm.ToolCall{
			{ID: "call_1", Name: "read", Arguments: `{"path":"a.txt"}`},
			{ID: "call_2", Name: "bash", Arguments: `{"command":"ls -la"}`},
		}, true)
		if r.msg.Content[0].Type != llm.PartText {
			t.Errorf("text must precede the tool calls; first part is %s", r.msg.Content[0].Type)
		}
	}},
	{name: CaseSplitArgs, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopToolUse)
		wantCalls(t, r.msg, []llm.ToolCall{
			{ID: "call_9", Name: "write", Arguments: `{"path":"dir/file.go","content":"package main\n"}`},
		}, true)
		if n := countEvents(r, llm.EventToolCallDelta); n < 5 {
			t.Errorf("toolcall_delta events = %d, want at least 5", n)
		}
	}},
	{name: CaseUsage, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopEnd)
		want := llm.Usage{Input: 100, Output: 20, CacheRead: 50}
		if h.CacheWrite {
			want.CacheWrite = 30
		}
		wantUsage(t, r.msg, want)
	}},
	{name: CaseNoUsage, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopEnd)
		wantText(t, r.msg, "ok")
		wantUsage(t, r.msg, llm.Usage{})
	}},
	{name: CaseLength, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopLength)
		wantText(t, r.msg, "Writing.")
		wantCalls(t, r.msg, []llm.ToolCall{
			{ID: "call_3", Name: "write", Arguments: `{"path":"a.txt","content":"abc`},
		}, false)
	}},
	{name: CaseInvalidArgs, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantStop(t, r.msg, llm.StopToolUse)
		wantCalls(t, r.msg, []llm.ToolCall{
			{ID: "call_4", Name: "read", Arguments: `{"path":"a.txt",}`},
		}, false)
	}},
	{name: CaseRateLimit, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantErr(t, r.msg, llm.KindRateLimit, true)
		if r.msg.Err != nil && r.msg.Err.RetryAfter() != 2*time.Second {
			t.Errorf("RetryAfter = %v, want 2s from the retry-after header", r.msg.Err.RetryAfter())
		}
		retried(t, srv, m, 2*time.Second)
	}},
	{name: CaseServerError, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantErr(t, r.msg, llm.KindServer, true)
		retried(t, srv, m, -1)
	}},
	{name: CaseOverloaded, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		if r.msg.StopReason != llm.StopError || r.msg.Err == nil || !r.msg.Err.Retryable ||
			(r.msg.Err.Kind != llm.KindOverloaded && r.msg.Err.Kind != llm.KindServer) {
			t.Fatalf("mid-stream overload: got stop %q err %+v, want a retryable overloaded or server error", r.msg.StopReason, r.msg.Err)
		}
		retried(t, srv, m, -1)
	}},
	{name: CaseCut, run: incomplete(llm.KindIncompleteStream, "")},
	{name: CaseCutMidEvent, run: incomplete(llm.KindIncompleteStream, "")},
	{name: CaseNoTerminal, run: incomplete(llm.KindIncompleteStream, "")},
	{name: CaseIdle, run: incomplete(llm.KindIncompleteStream, "idle timeout"), limits: tiny},
	{name: CaseNoHeaders, run: incomplete(llm.KindTimeout, "header timeout"), limits: tiny},
	{name: CaseAuth, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		rec := &instantSleep{}
		r := stream(context.Background(), llm.Retry(m, llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, Sleep: rec.sleep}), nil)
		checkInvariants(t, r)
		wantErr(t, r.msg, llm.KindAuth, false)
		if n := srv.count(); n != 1 {
			t.Errorf("an auth failure was sent %d times, want 1 (terminal, no retry)", n)
		}
	}},
	{name: CaseHang, run: func(t *testing.T, h Harness, srv *server, m llm.Model) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := stream(ctx, m, func(ev llm.Event) {
			if ev.Type == llm.EventTextDelta {
				cancel()
			}
		})
		checkInvariants(t, r)
		if r.msg.StopReason != llm.StopAborted {
			t.Fatalf("stop reason = %q (err %+v), want aborted after cancellation", r.msg.StopReason, r.msg.Err)
		}
	}},
}

// incomplete returns the run of a case whose first response does not complete: the adapter
// fails with a retryable error of kind whose message contains says (when not empty), and a
// retry keeps only the complete answer of the second response.
func incomplete(kind llm.ErrorKind, says string) func(t *testing.T, h Harness, srv *server, m llm.Model) {
	return func(t *testing.T, h Harness, srv *server, m llm.Model) {
		r := stream(context.Background(), m, nil)
		checkInvariants(t, r)
		wantErr(t, r.msg, kind, true)
		if r.msg.Err != nil && !strings.Contains(r.msg.Err.Message, says) {
			t.Errorf("error message %q does not say %q", r.msg.Err.Message, says)
		}
		if got := r.msg.Text(); !strings.HasPrefix("Hello, world!", got) {
			t.Errorf("the failed attempt kept text %q, which the server never sent", got)
		}
		retried(t, srv, m, -1)
	}
}

// retried runs the case again under Retry (the server continues with its next response) and
// checks that the second attempt succeeds with the CaseText outcome after the wanted wait
// (wantWait < 0: any wait).
func retried(t *testing.T, srv *server, m llm.Model, wantWait time.Duration) {
	t.Helper()
	srv.mu.Lock()
	srv.requests = nil
	srv.mu.Unlock()
	rec := &instantSleep{}
	var retries int
	r := stream(context.Background(), llm.Retry(m, llm.RetryPolicy{MaxAttempts: 3, BaseDelay: 10 * time.Millisecond, MaxDelay: time.Minute, Sleep: rec.sleep}),
		func(ev llm.Event) {
			if ev.Type == llm.EventRetry {
				retries++
			}
		})
	checkInvariants(t, r)
	wantStop(t, r.msg, llm.StopEnd)
	wantText(t, r.msg, "Hello, world!")
	if n := len(r.msg.Content); n != 1 {
		t.Errorf("the answer has %d parts (%+v), want the one text part of the complete response: nothing of the failed attempt", n, r.msg.Content)
	}
	if retries != 1 || len(rec.delays) != 1 {
		t.Fatalf("retry events = %d, waits = %v; want exactly one retry", retries, rec.delays)
	}
	if wantWait >= 0 && rec.delays[0] != wantWait {
		t.Errorf("waited %v before retrying, want %v (the server's retry-after)", rec.delays[0], wantWait)
	}
	if n := srv.count(); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

// checkInvariants checks the stream contract every adapter keeps.
func checkInvariants(t *testing.T, r result) {
	t.Helper()
	if r.msg == nil {
		t.Fatal("Stream returned nil")
	}
	if r.msg.Role != llm.RoleAssistant {
		t.Errorf("role = %q, want assistant", r.msg.Role)
	}
	if len(r.events) == 0 {
		t.Fatal("no events emitted")
	}
	last := r.events[len(r.events)-1]
	if last.Type != llm.EventDone && last.Type != llm.EventError {
		t.Errorf("last event = %s, want done or error", last.Type)
	}
	if last.Message != r.msg {
		t.Errorf("the final event does not carry the returned message")
	}
	if (last.Type == llm.EventError) != r.msg.Failed() {
		t.Errorf("final event %s does not match stop reason %q", last.Type, r.msg.StopReason)
	}
	if r.msg.Failed() {
		if r.msg.Err == nil || r.msg.Err.Message == "" {
			t.Errorf("failed message without an error description")
		}
	}
	if r.msg.Err != nil && strings.Contains(r.msg.Err.Message, APIKey) {
		t.Errorf("error message leaks the API key: %q", r.msg.Err.Message)
	}
	// Deltas add up to the final content.
	var text, thinking string
	args := map[string]string{}
	var order []string
	current := ""
	for _, ev := range r.events {
		switch ev.Type {
		case llm.EventRetry:
			text, thinking, args, order = "", "", map[string]string{}, nil
		case llm.EventTextDelta:
			text += ev.Delta
		case llm.EventThinkingDelta:
			thinking += ev.Delta
		case llm.EventToolCallStart:
			if ev.Call == nil || ev.Call.ID == "" || ev.Call.Name == "" {
				t.Errorf("toolcall_start without id and name: %+v", ev.Call)
				continue
			}
			current = ev.Call.ID
			order = append(order, current)
		case llm.EventToolCallDelta:
			args[current] += ev.Delta
		case llm.EventToolCallEnd:
			if ev.Call == nil || ev.Call.ID != current {
				t.Errorf("toolcall_end for %+v, want call %q", ev.Call, current)
			}
		}
	}
	if !r.msg.Failed() {
		if got := r.msg.Text(); got != text {
			t.Errorf("text deltas add up to %q, message text is %q", text, got)
		}
		calls := r.msg.ToolCalls()
		if len(calls) != len(order) {
			t.Errorf("%d toolcall_start events, %d calls in the message", len(order), len(calls))
		}
		for _, c := range calls {
			if args[c.ID] != c.Arguments {
				t.Errorf("call %s: deltas add up to %q, arguments are %q", c.ID, args[c.ID], c.Arguments)
			}
		}
		_ = thinking
	}
}

func countEvents(r result, typ llm.EventType) int {
	n := 0
	for _, ev := range r.events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func wantStop(t *testing.T, m *llm.Message, want llm.StopReason) {
	t.Helper()
	if m.StopReason != want {
		t.Fatalf("stop reason = %q (err %+v), want %q", m.StopReason, m.Err, want)
	}
}

func wantText(t *testing.T, m *llm.Message, want string) {
	t.Helper()
	if got := m.Text(); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func wantUsage(t *testing.T, m *llm.Message, want llm.Usage) {
	t.Helper()
	var got llm.Usage
	if m.Usage != nil {
		got = *m.Usage
	}
	got.Cost = llm.Cost{}
	if got != want {
		t.Errorf("usage = %+v, want %+v", got, want)
	}
}

func wantErr(t *testing.T, m *llm.Message, kind llm.ErrorKind, retryable bool) {
	t.Helper()
	if m.StopReason != llm.StopError || m.Err == nil {
		t.Fatalf("stop reason = %q err %+v, want an error", m.StopReason, m.Err)
	}
	if m.Err.Kind != kind || m.Err.Retryable != retryable {
		t.Errorf("error = %+v, want kind %s retryable %v", m.Err, kind, retryable)
	}
}

func wantCalls(t *testing.T, m *llm.Message, want []llm.ToolCall, asJSON bool) {
	t.Helper()
	got := m.ToolCalls()
	if len(got) != len(want) {
		t.Fatalf("tool calls = %d (%+v), want %d", len(got), got, len(want))
	}
	for i := range want {
		g := *got[i]
		if g.ID != want[i].ID || g.Name != want[i].Name {
			t.Errorf("call %d = %s %s, want %s %s", i, g.ID, g.Name, want[i].ID, want[i].Name)
		}
		if asJSON {
			if !jsonEqual(g.Arguments, want[i].Arguments) {
				t.Errorf("call %d arguments = %s, want %s", i, g.Arguments, want[i].Arguments)
			}
		} else if g.Arguments != want[i].Arguments {
			t.Errorf("call %d arguments = %q, want verbatim %q", i, g.Arguments, want[i].Arguments)
		}
	}
}
