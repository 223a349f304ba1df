package oaisdk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/sse"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{nil, 0},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"junk"}, "Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"-1"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, 0}, // in the past
	} {
		if got := RetryAfter(tc.h); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	if got := RetryAfter(http.Header{"Retry-After": {future}}); got < 58*time.Minute || got > time.Hour {
		t.Errorf("RetryAfter(date in an hour) = %v", got)
	}
}

func TestErrorText(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"Bad.","type":"invalid_request_error","code":"x"}}`:         "Bad. (invalid_request_error, x)",
		`{"error":{"message":"quota (insufficient_quota)","type":"insufficient_quota"}}`: "quota (insufficient_quota)",
		`{"error":"model not found"}`:           "model not found",
		`{"message":"flat","code":429}`:         "flat (429)",
		"  plain text\n":                        "plain text",
		`{"detail":"Not Found"}`:                `{"detail":"Not Found"}`,
		`{"error":{"type":"server_error"}}`:     "server_error",
		`{"error":{"message":"m","code":null}}`: "m",
	} {
		if got := ErrorText(body); got != want {
			t.Errorf("ErrorText(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestStreamFailure(t *testing.T) {
	for _, tc := range []struct {
		code, typ, msg string
		kind           llm.ErrorKind
		retryable      bool
	}{
		{"server_is_overloaded", "", "Our servers are currently overloaded.", llm.KindOverloaded, true},
		{"", "overloaded_error", "Overloaded", llm.KindOverloaded, true},
		{"server_error", "", "The server had an error.", llm.KindServer, true},
		{"rate_limit_exceeded", "", "Slow down.", llm.KindRateLimit, true},
		{"insufficient_quota", "", "You exceeded your current quota.", llm.KindSpendLimit, false},
		{"context_length_exceeded", "", "Too long.", llm.KindContext, false},
		{"invalid_prompt", "", "Invalid prompt.", llm.KindInvalid, false},
		{"", "", "", llm.KindServer, true},
		{"", "", "something odd", llm.KindServer, true},
	} {
		e := StreamFailure(tc.code, tc.typ, tc.msg)
		if e.Kind != tc.kind || e.Retryable != tc.retryable || e.Message == "" {
			t.Errorf("StreamFailure(%q, %q, %q) = %+v, want kind %s retryable %v", tc.code, tc.typ, tc.msg, e, tc.kind, tc.retryable)
		}
	}
}

func TestClassify(t *testing.T) {
	key := "sk-secret-key-123"
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		kind llm.ErrorKind
	}{
		{"http", bg, &sse.HTTPError{Status: 401, Body: `{"error":{"message":"bad key ` + key + `"}}`}, llm.KindAuth},
		{"stream error", bg, &EventError{Data: []byte(`{"error":{"message":"overloaded ` + key + `","type":"server_error"}}`)}, llm.KindOverloaded},
		{"malformed", bg, fmt.Errorf("chunk 1: %w", json.Unmarshal([]byte(`{"x":`), new(any))), llm.KindProtocol},
		{"too long", bg, fmt.Errorf("line: %w", bufio.ErrTooLong), llm.KindProtocol},
		{"cut", bg, io.ErrUnexpectedEOF, llm.KindNetwork},
		{"transport", bg, errors.New("dial tcp: connection refused " + key), llm.KindNetwork},
		{"cancelled", cancelled, errors.New("context canceled"), llm.KindAborted},
	} {
		e := Classify(tc.ctx, tc.err, key)
		if e.Kind != tc.kind {
			t.Errorf("%s: kind %s, want %s (%+v)", tc.name, e.Kind, tc.kind, e)
		}
		if e.Message == "" || strings.Contains(e.Message, key) {
			t.Errorf("%s: message %q is empty or leaks the key", tc.name, e.Message)
		}
	}
}

func TestUsage(t *testing.T) {
	u := Usage(150, 20, 50, llm.Pricing{Input: 1, Output: 10, CacheRead: 0.1})
	want := llm.Usage{Input: 100, Output: 20, CacheRead: 50}
	got := *u
	got.Cost = llm.Cost{}
	if got != want {
		t.Errorf("usage = %+v, want %+v", got, want)
	}
	if c := u.Cost.Total; c < 0.000305-1e-12 || c > 0.000305+1e-12 {
		t.Errorf("cost = %v, want 0.000305", c)
	}
	if u := Usage(10, 1, 50, llm.Pricing{}); u.Input != 0 || u.CacheRead != 50 {
		t.Errorf("inconsistent counts: %+v", u)
	}
}

func TestAssembler(t *testing.T) {
	var evs []llm.Event
	msg := &llm.Message{}
	a := NewAssembler(msg, func(ev llm.Event) { evs = append(evs, ev) })
	a.Thinking("hm")
	a.Text("a")
	a.Text("b")
	a.Text("")
	c := a.StartCall("id1", "read")
	a.Append(c, `{}`)
	a.Text("after")
	out := a.Done(llm.StopToolUse)
	a.Text("ignored")
	a.Fail(&llm.Error{Kind: llm.KindNetwork, Message: "late"})

	var types []llm.EventType
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	want := []llm.EventType{llm.EventStart,
		llm.EventThinkingStart, llm.EventThinkingDelta, llm.EventThinkingEnd,
		llm.EventTextStart, llm.EventTextDelta, llm.EventTextDelta, llm.EventTextEnd,
		llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallEnd,
		llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd, llm.EventDone}
	if len(types) != len(want) {
		t.Fatalf("events = %v\nwant %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("events = %v\nwant %v", types, want)
		}
	}
	if out != msg || msg.StopReason != llm.StopToolUse || msg.Usage == nil || msg.Text() != "abafter" || msg.Err != nil {
		t.Errorf("message = %+v", msg)
	}
	if evs[8].Call == msg.Content[2].Call || evs[8].Call.Arguments != "" {
		t.Errorf("toolcall_start must carry a copy with id and name only")
	}
}

func TestGuard(t *testing.T) {
	var last llm.Event
	out := func() (out *llm.Message) {
		a := NewAssembler(&llm.Message{}, func(ev llm.Event) { last = ev })
		defer Guard(a, &out, "k")
		var m map[string]int
		//lint:ignore SA5000 the panic is what the test needs
		m["x"] = 1
		return nil
	}()
	if out == nil || out.StopReason != llm.StopError || out.Err.Kind != llm.KindProtocol || last.Message != out {
		t.Errorf("out = %+v, last event %+v", out, last)
	}
}

func TestNewClient(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		if _, err := NewClient(u, "", nil); err == nil {
			t.Errorf("NewClient(%q) succeeded", u)
		}
	}
	for base, want := range map[string]string{
		"http://localhost:8080/v1":    "http://localhost:8080/v1/chat/completions",
		"http://localhost:8080/v1/":   "http://localhost:8080/v1/chat/completions",
		"https://h/api/openai/v1?x=1": "https://h/api/openai/v1/chat/completions",
		"http://localhost:8080":       "http://localhost:8080/chat/completions",
		"http://h/a%2Fb/v1":           "http://h/a%2Fb/v1/chat/completions",
	} {
		c, err := NewClient(base, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.URL("chat/completions"); got != want {
			t.Errorf("URL under %s = %s, want %s", base, got, want)
		}
	}
}

// TestPostHeaders checks what a request carries: the bearer key (none when empty), the JSON
// body, the content type and rein's user agent.
func TestPostHeaders(t *testing.T) {
	var got http.Header
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		body = string(b)
	}))
	defer srv.Close()
	for _, key := range []string{"sk-1", ""} {
		c, _ := NewClient(srv.URL, key, nil)
		res, err := c.Post(context.Background(), "x", 2, bodyOf("{}"), watchdog.New(watchdog.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if a := got.Get("Authorization"); (key == "" && a != "") || (key != "" && a != "Bearer "+key) {
			t.Errorf("key %q: Authorization %q", key, a)
		}
		if got.Get("Content-Type") != "application/json" || got.Get("User-Agent") != "rein" || body != "{}" {
			t.Errorf("headers %v, body %q", got, body)
		}
	}
}

// TestPostHTTPError checks that an error status becomes an *sse.HTTPError with its body and
// headers, which Classify reads.
func TestPostHTTPError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after-ms", "1500")
		w.WriteHeader(429)
		io.WriteString(w, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)
	}))
	defer srv.Close()
	c, _ := NewClient(srv.URL, "k", nil)
	_, err := c.Post(context.Background(), "x", 2, bodyOf("{}"), watchdog.New(watchdog.Limits{}))
	var he *sse.HTTPError
	if !errors.As(err, &he) || he.Status != 429 {
		t.Fatalf("err %v, want an *sse.HTTPError 429", err)
	}
	e := Classify(context.Background(), err, "k")
	if e.Kind != llm.KindRateLimit || !e.Retryable || e.RetryAfter() != 1500*time.Millisecond || !strings.Contains(e.Message, "slow down") {
		t.Errorf("classified %+v", e)
	}
}

func bodyOf(s string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
}

// TestStreamConnectionReused checks that consecutive streams use one connection: the adapters
// close a body they stopped reading at "[DONE]", and drainBody reads the rest so net/http
// keeps the connection.
func TestStreamConnectionReused(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(2 * time.Millisecond) // the chunked terminator comes a little later
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(srv.URL, "", &http.Client{Transport: &http.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		res, err := c.Post(context.Background(), "chat/completions", 2, bodyOf("{}"), watchdog.New(watchdog.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		d := sse.NewDecoder(res.Body)
		for d.Next() && !bytes.HasPrefix(d.Event().Data, []byte("[DONE]")) {
		}
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 1 {
		t.Errorf("5 streams used %d connections, want 1", conns)
	}
}
