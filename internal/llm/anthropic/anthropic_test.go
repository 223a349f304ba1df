package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/llm/llmtest"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

const testModel = "claude-sonnet-4-5"

var testPricing = llm.Pricing{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

func newModel(baseURL, apiKey string) llm.Model {
	return anthropic.New(anthropic.Config{Model: testModel, BaseURL: baseURL, APIKey: apiKey,
		Pricing: testPricing, MaxTokens: 64000})
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".sse"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// apiError is the body of an Anthropic error answer.
func apiError(typ, message string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + message + `"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
}

func TestConformance(t *testing.T) {
	fixtures := map[string]string{}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		fixtures[name] = fixture(t, name)
	}
	text := func() llmtest.Response { return llmtest.Response{Body: fixtures["text"]} }
	llmtest.Run(t, llmtest.Harness{
		New: func(baseURL, apiKey string, l watchdog.Limits) llm.Model {
			return anthropic.New(anthropic.Config{Model: testModel, BaseURL: baseURL, APIKey: apiKey,
				Pricing: testPricing, MaxTokens: 64000, Timeouts: l})
		},
		CacheWrite: true,
		Fixture: func(name string) ([]llmtest.Response, bool) {
			switch name {
			case llmtest.CaseRateLimit:
				return []llmtest.Response{{Status: 429,
					Header: http.Header{"Retry-After": {"2"}, "Request-Id": {"req_011CSHoEeqs5C35K2UUqR7Fy"}},
					Body:   apiError("rate_limit_error", "This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.")},
					text()}, true
			case llmtest.CaseServerError:
				return []llmtest.Response{{Status: 500, Body: apiError("api_error", "Internal server error")}, text()}, true
			case llmtest.CaseOverloaded:
				return []llmtest.Response{{Body: fixtures["overloaded"]}, text()}, true
			case llmtest.CaseCut:
				body := fixtures["text"]
				return []llmtest.Response{{Body: body, CutAfter: strings.Index(body, `", world!"`)}, text()}, true
			case llmtest.CaseCutMidEvent:
				body := fixtures["text"]
				return []llmtest.Response{{Body: body[:strings.Index(body, `", world!"`)]}, text()}, true
			case llmtest.CaseNoTerminal:
				return []llmtest.Response{{Body: fixtures["hang"]}, text()}, true
			case llmtest.CaseIdle:
				return []llmtest.Response{{Body: fixtures["hang"], Hang: true}, text()}, true
			case llmtest.CaseNoHeaders:
				return []llmtest.Response{{Stall: true}, text()}, true
			case llmtest.CaseAuth:
				return []llmtest.Response{{Status: 401, Body: apiError("authentication_error", "invalid x-api-key")}}, true
			case llmtest.CaseHang:
				return []llmtest.Response{{Body: fixtures["hang"], Hang: true}}, true
			}
			body, ok := fixtures[name]
			return []llmtest.Response{{Body: body}}, ok
		},
		CheckRequest: checkRequest,
	})
}

// checkRequest asserts the wire form of llmtest.Request.
func checkRequest(t *testing.T, r *http.Request, body []byte) {
	t.Helper()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("x-api-key"); got != llmtest.APIKey {
		t.Errorf("x-api-key = %q, want the configured key", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none (the key goes in x-api-key only)", got)
	}
	if r.Header.Get("anthropic-version") == "" {
		t.Error("anthropic-version header missing")
	}
	for _, h := range []string{"traceparent", "tracestate", "baggage"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("%s header %q sent: rein sends no trace context to the provider", h, v)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	var want map[string]any
	mustUnmarshal(t, `{
		"model": "claude-sonnet-4-5",
		"max_tokens": 1024,
		"stream": true,
		"system": [{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "List the files."}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "Checking."},
				{"type": "tool_use", "id": "call_0", "name": "ls", "input": {"path": "."}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "call_0", "content": [{"type": "text", "text": "a.txt\nb.txt"}]},
				{"type": "text", "text": "Now read a.txt.", "cache_control": {"type": "ephemeral"}}
			]}
		],
		"tools": [
			{"name": "read", "description": "Read a file.", "input_schema": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}},
			{"name": "ls", "description": "List a directory.", "input_schema": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}}
		]
	}`, &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func mustUnmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("bad JSON in test: %v", err)
	}
}

// serve answers every request with status and body and records the request bodies.
func serve(t *testing.T, status int, header http.Header, body string) (url string, bodies *[][]byte) {
	t.Helper()
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, b)
		for k, vs := range header {
			w.Header()[k] = vs
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &got
}

func run(t *testing.T, m llm.Model, req *llm.Request) (*llm.Message, []llm.Event) {
	t.Helper()
	var events []llm.Event
	msg := m.Stream(context.Background(), req, func(ev llm.Event) { events = append(events, ev) })
	if len(events) == 0 || events[len(events)-1].Message != msg {
		t.Fatalf("the last event does not carry the returned message")
	}
	return msg, events
}

// requestMessages returns the "messages" of the one recorded request body.
func requestBody(t *testing.T, bodies *[][]byte) map[string]any {
	t.Helper()
	if len(*bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(*bodies))
	}
	var got map[string]any
	if err := json.Unmarshal((*bodies)[0], &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRequestHealsHistory(t *testing.T) {
	url, bodies := serve(t, 200, nil, fixture(t, "text"))
	m := newModel(url, "k")
	req := &llm.Request{
		Messages: []llm.Message{
			llm.UserText("Do it."),
			{Role: llm.RoleAssistant, Provider: llm.ProviderAnthropic, Model: testModel, StopReason: llm.StopToolUse,
				Content: []llm.Part{llm.Call("toolu_1", "read", `{"path":"a"}`), llm.Call("toolu_2", "read", `{"path":"b"}`)}},
			llm.ToolResultText(&llm.ToolCall{ID: "toolu_2", Name: "read"}, "B", false),
			{Role: llm.RoleAssistant, StopReason: llm.StopError, Content: []llm.Part{llm.Text("half")},
				Err: &llm.Error{Kind: llm.KindNetwork, Message: "cut"}},
			{Role: llm.RoleAssistant, StopReason: llm.StopAborted, Content: []llm.Part{llm.Call("toolu_x", "read", `{"path":`)}},
			llm.UserText("Go on."),
		},
	}
	msg, _ := run(t, m, req)
	if msg.Failed() {
		t.Fatalf("stream failed: %+v", msg.Err)
	}
	var want []any
	mustUnmarshal(t, `[
		{"role": "user", "content": [{"type": "text", "text": "Do it."}]},
		{"role": "assistant", "content": [
			{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
			{"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b"}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "B"}]},
			{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "No result provided"}]},
			{"type": "text", "text": "Go on.", "cache_control": {"type": "ephemeral"}}
		]}
	]`, &want)
	if diff := cmp.Diff(want, requestBody(t, bodies)["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestRequestThinking(t *testing.T) {
	url, bodies := serve(t, 200, nil, fixture(t, "text"))
	m := newModel(url, "k")
	req := &llm.Request{
		MaxTokens: 4096,
		Thinking:  llm.ThinkingMedium,
		Messages: []llm.Message{
			llm.UserText("Hi."),
			{Role: llm.RoleAssistant, Provider: llm.ProviderAnthropic, API: llm.APIAnthropicMessages, Model: testModel, StopReason: llm.StopEnd,
				Content: []llm.Part{
					{Type: llm.PartThinking, Text: "Hmm.", Signature: "sig-1"},
					{Type: llm.PartThinking, Redacted: true, Signature: "opaque"},
					llm.Text("Hello."),
				}},
			{Role: llm.RoleAssistant, Provider: "openai", Model: "gpt-5", StopReason: llm.StopEnd,
				Content: []llm.Part{
					{Type: llm.PartThinking, Text: "Other model reasoning.", Signature: "enc"},
					{Type: llm.PartThinking, Redacted: true, Signature: "opaque2"},
					{Type: llm.PartThinking, Text: ""},
					llm.Text("Hi again."),
					llm.Call("c1", "bad", `{"path":`),
				}},
			llm.ToolResultText(&llm.ToolCall{ID: "c1", Name: "bad"}, "invalid arguments", true),
		},
	}
	if msg, _ := run(t, m, req); msg.Failed() {
		t.Fatalf("stream failed: %+v", msg.Err)
	}
	got := requestBody(t, bodies)
	if got["max_tokens"] != float64(4096+8192) {
		t.Errorf("max_tokens = %v, want %d (output plus thinking budget)", got["max_tokens"], 4096+8192)
	}
	if diff := cmp.Diff(map[string]any{"type": "enabled", "budget_tokens": float64(8192)}, got["thinking"]); diff != "" {
		t.Errorf("thinking (-want +got):\n%s", diff)
	}
	var want []any
	mustUnmarshal(t, `[
		{"role": "user", "content": [{"type": "text", "text": "Hi."}]},
		{"role": "assistant", "content": [
			{"type": "thinking", "thinking": "Hmm.", "signature": "sig-1"},
			{"type": "redacted_thinking", "data": "opaque"},
			{"type": "text", "text": "Hello."},
			{"type": "text", "text": "Other model reasoning."},
			{"type": "text", "text": "Hi again."},
			{"type": "tool_use", "id": "c1", "name": "bad", "input": {}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "c1", "is_error": true, "content": [{"type": "text", "text": "invalid arguments"}],
			 "cache_control": {"type": "ephemeral"}}
		]}
	]`, &want)
	if diff := cmp.Diff(want, got["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if _, ok := got["system"]; ok {
		t.Errorf("system sent for an empty system prompt")
	}
	if _, ok := got["tools"]; ok {
		t.Errorf("tools sent for a request without tools")
	}
}

func TestMaxTokensDefaults(t *testing.T) {
	tests := []struct {
		name      string
		modelMax  int
		reqMax    int
		thinking  llm.ThinkingLevel
		wantMax   float64
		wantThink any
	}{
		{"model default", 64000, 0, "", 64000, nil},
		{"unknown model", 0, 0, llm.ThinkingOff, llm.DefaultMaxOutput, nil},
		{"request wins", 64000, 2000, "", 2000, nil},
		{"budget within the model limit", 64000, 0, llm.ThinkingHigh, 64000, map[string]any{"type": "enabled", "budget_tokens": float64(16384)}},
		{"budget shrunk to leave output room", 8000, 0, llm.ThinkingHigh, 8000, map[string]any{"type": "enabled", "budget_tokens": float64(8000 - 1024)}},
		{"no room for thinking", 1500, 0, llm.ThinkingLow, 1500, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, bodies := serve(t, 200, nil, fixture(t, "text"))
			m := anthropic.New(anthropic.Config{Model: testModel, BaseURL: url, APIKey: "k", MaxTokens: tt.modelMax})
			run(t, m, &llm.Request{MaxTokens: tt.reqMax, Thinking: tt.thinking, Messages: []llm.Message{llm.UserText("x")}})
			got := requestBody(t, bodies)
			if got["max_tokens"] != tt.wantMax {
				t.Errorf("max_tokens = %v, want %v", got["max_tokens"], tt.wantMax)
			}
			if diff := cmp.Diff(tt.wantThink, got["thinking"]); diff != "" {
				t.Errorf("thinking (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamEvents(t *testing.T) {
	url, _ := serve(t, 200, nil, fixture(t, "tool_calls"))
	msg, events := run(t, newModel(url, "k"), llmtest.Request())
	type ev struct {
		Type  llm.EventType
		Index int
		Delta string
		Call  string
	}
	var got []ev
	for _, e := range events {
		x := ev{Type: e.Type, Index: e.Index, Delta: e.Delta}
		if e.Call != nil {
			x.Call = e.Call.ID + " " + e.Call.Name + " " + e.Call.Arguments
		}
		got = append(got, x)
	}
	want := []ev{
		{Type: llm.EventStart},
		{Type: llm.EventTextStart},
		{Type: llm.EventTextDelta, Delta: "Look"},
		{Type: llm.EventTextDelta, Delta: "ing."},
		{Type: llm.EventTextEnd},
		{Type: llm.EventToolCallStart, Index: 1, Call: "call_1 read "},
		{Type: llm.EventToolCallDelta, Index: 1, Delta: `{"path": `},
		{Type: llm.EventToolCallDelta, Index: 1, Delta: `"a.txt"}`},
		{Type: llm.EventToolCallEnd, Index: 1, Call: `call_1 read {"path": "a.txt"}`},
		{Type: llm.EventToolCallStart, Index: 2, Call: "call_2 bash "},
		{Type: llm.EventToolCallDelta, Index: 2, Delta: `{"command": "ls`},
		{Type: llm.EventToolCallDelta, Index: 2, Delta: ` -la"}`},
		{Type: llm.EventToolCallEnd, Index: 2, Call: `call_2 bash {"command": "ls -la"}`},
		{Type: llm.EventDone},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if msg.ResponseID != "msg_01ToolCalls" || msg.Provider != llm.ProviderAnthropic || msg.API != llm.APIAnthropicMessages || msg.Model != testModel {
		t.Errorf("message metadata = %q %q %q %q", msg.ResponseID, msg.Provider, msg.API, msg.Model)
	}
	// Arguments are kept verbatim, spaces included.
	if got := msg.ToolCalls()[0].Arguments; got != `{"path": "a.txt"}` {
		t.Errorf("arguments = %q, want them verbatim", got)
	}
}

func TestThinkingSignature(t *testing.T) {
	url, _ := serve(t, 200, nil, fixture(t, "thinking"))
	msg, _ := run(t, newModel(url, "k"), llmtest.Request())
	p := msg.Content[0]
	if p.Type != llm.PartThinking || p.Text != "Let me think." || p.Signature != "EqQBCkgIARABGAIiQL2mNz8sigTestOnlyAAAA==" {
		t.Errorf("thinking part = %+v", p)
	}
}

func TestRedactedThinkingAndEmptyToolInput(t *testing.T) {
	body := sse(
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"now","input":{}}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"ls","input":{"path":"."}}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":7,"output_tokens":9,"cache_read_input_tokens":4,"cache_creation_input_tokens":2}}`,
		`{"type":"message_stop"}`,
	)
	url, _ := serve(t, 200, nil, body)
	msg, events := run(t, newModel(url, "k"), llmtest.Request())
	if p := msg.Content[0]; p.Type != llm.PartThinking || !p.Redacted || p.Signature != "EmwKAhgBEgy3va3pzix" {
		t.Errorf("redacted thinking part = %+v", p)
	}
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].Arguments != "{}" || calls[1].Arguments != `{"path":"."}` {
		t.Fatalf("calls = %+v, want {} for a call without input deltas and the start input otherwise", calls)
	}
	var deltas []string
	for _, e := range events {
		if e.Type == llm.EventToolCallDelta {
			deltas = append(deltas, e.Delta)
		}
	}
	if diff := cmp.Diff([]string{"{}", `{"path":"."}`}, deltas); diff != "" {
		t.Errorf("toolcall deltas (-want +got):\n%s", diff)
	}
	if msg.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q", msg.StopReason)
	}
	// message_delta's usage overrides message_start's.
	want := llm.Usage{Input: 7, Output: 9, CacheRead: 4, CacheWrite: 2}
	want.Price(testPricing)
	if diff := cmp.Diff(&want, msg.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestStopReasons(t *testing.T) {
	for reason, want := range map[string]llm.StopReason{
		"end_turn": llm.StopEnd, "stop_sequence": llm.StopEnd, "refusal": llm.StopEnd, "pause_turn": llm.StopEnd,
		"max_tokens": llm.StopLength, "model_context_window_exceeded": llm.StopLength, "tool_use": llm.StopToolUse,
	} {
		body := sse(
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"x"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"`+reason+`"}}`,
			`{"type":"message_stop"}`,
		)
		url, _ := serve(t, 200, nil, body)
		msg, _ := run(t, newModel(url, "k"), llmtest.Request())
		if msg.StopReason != want || msg.FinishReason != reason || msg.Text() != "x" {
			t.Errorf("%s: stop reason %q (provider's %q) text %q, want %q", reason, msg.StopReason, msg.FinishReason, msg.Text(), want)
		}
	}
}

func TestErrors(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`
	tests := []struct {
		name      string
		status    int
		header    http.Header
		body      string
		kind      llm.ErrorKind
		retryable bool
		after     time.Duration
	}{
		{"529", 529, nil, apiError("overloaded_error", "Overloaded"), llm.KindOverloaded, true, 0},
		{"retry-after-ms", 429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, apiError("rate_limit_error", "slow down"), llm.KindRateLimit, true, 1500 * time.Millisecond},
		{"400 context", 400, nil, apiError("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), llm.KindContext, false, 0},
		{"400 billing", 400, nil, apiError("invalid_request_error", "Your credit balance is too low to access the Anthropic API."), llm.KindSpendLimit, false, 0},
		{"403", 403, nil, apiError("permission_error", "no access"), llm.KindAuth, false, 0},
		// The structured type and code decide; the message text would say otherwise.
		{"429 rate limit that mentions billing", 429, nil, apiError("rate_limit_error", rateLimitBilling), llm.KindRateLimit, true, 0},
		{"429 spend limit by its code", 429, nil, spendLimit, llm.KindSpendLimit, false, 0},
		{"402 billing_error", 402, nil, apiError("billing_error", "This organization cannot be billed right now."), llm.KindSpendLimit, false, 0},
		{"413 request_too_large", 413, nil, apiError("request_too_large", "Request exceeds the maximum allowed number of bytes."), llm.KindContext, false, 0},
		{"event rate limit that mentions billing", 200, nil, sse(start, `{"type":"error","error":{"type":"rate_limit_error","message":"`+rateLimitBilling+`"}}`), llm.KindRateLimit, true, 0},
		{"event spend limit by its code", 200, nil, sse(start, spendLimit), llm.KindSpendLimit, false, 0},
		{"502 html", 502, http.Header{"Content-Type": {"text/html"}}, "<html>Bad Gateway</html>", llm.KindServer, true, 0},
		{"event overloaded", 200, nil, sse(start, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), llm.KindOverloaded, true, 0},
		{"event api_error", 200, nil, sse(start, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`), llm.KindServer, true, 0},
		{"event invalid request", 200, nil, sse(start, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`), llm.KindContext, false, 0},
		{"event unknown type", 200, nil, sse(start, `{"type":"error","error":{"type":"mystery_error","message":"?"}}`), llm.KindServer, true, 0},
		{"clean end without message_stop", 200, nil, sse(start), llm.KindIncompleteStream, true, 0},
		{"message_stop without a stop_reason", 200, nil, sse(start, `{"type":"message_stop"}`), llm.KindIncompleteStream, true, 0},
		{"undecodable event", 200, nil, "event: message_start\ndata: {\"type\":\"message_start\",\n\n", llm.KindProtocol, false, 0},
		{"delta for an unknown block", 200, nil, sse(start, `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`), llm.KindProtocol, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := serve(t, tt.status, tt.header, tt.body)
			msg, _ := run(t, newModel(url, llmtest.APIKey), llmtest.Request())
			if msg.StopReason != llm.StopError || msg.Err == nil {
				t.Fatalf("stop %q err %+v, want an error", msg.StopReason, msg.Err)
			}
			if msg.Err.Kind != tt.kind || msg.Err.Retryable != tt.retryable || msg.Err.RetryAfter() != tt.after {
				t.Errorf("error = %+v, want kind %s retryable %v retry after %v", msg.Err, tt.kind, tt.retryable, tt.after)
			}
			if msg.Err.Message == "" || strings.Contains(msg.Err.Message, llmtest.APIKey) {
				t.Errorf("error message %q is empty or leaks the key", msg.Err.Message)
			}
		})
	}
}

// Error bodies whose message text suggests another class than their structured fields.
const (
	// rateLimitBilling is a rate limit whose text names billing: the type says retry.
	rateLimitBilling = "This request would exceed your organization's rate limit of 50 requests per minute. To raise it, see Plans & Billing in the Console."
	// spendLimit is a 429 rate_limit_error whose error_code says the monthly spend limit is
	// reached, with a message that reads like a transient limit: the code says stop.
	spendLimit = `{"type":"error","error":{"type":"rate_limit_error","message":"You have reached your monthly API usage limit. Please try again later.","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
)

func TestKeyNeverInErrors(t *testing.T) {
	const key = "sk-ant-secret-key-0001"
	url, _ := serve(t, 400, nil, apiError("invalid_request_error", "bad key "+key))
	msg, _ := run(t, newModel(url, key), llmtest.Request())
	if msg.Err == nil || strings.Contains(msg.Err.Message, key) || !strings.Contains(msg.Err.Message, "[redacted]") {
		t.Errorf("error = %+v, want the echoed key redacted", msg.Err)
	}
}

func TestUnavailableWithoutKey(t *testing.T) {
	msg, events := run(t, anthropic.New(anthropic.Config{Model: testModel}), llmtest.Request())
	if msg.Err == nil || msg.Err.Kind != llm.KindUnavailable || events[0].Type != llm.EventStart {
		t.Errorf("error = %+v, want unavailable", msg.Err)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	msg, _ := run(t, newModel(url, "k"), llmtest.Request())
	if msg.Err == nil || msg.Err.Kind != llm.KindNetwork || !msg.Err.Retryable {
		t.Errorf("error = %+v, want a retryable network error", msg.Err)
	}
}

func TestCancelledBeforeRequest(t *testing.T) {
	url, _ := serve(t, 200, nil, fixture(t, "text"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var last llm.Event
	msg := newModel(url, "k").Stream(ctx, llmtest.Request(), func(ev llm.Event) { last = ev })
	if msg.StopReason != llm.StopAborted || last.Type != llm.EventError || last.Message != msg {
		t.Errorf("stop %q err %+v, want aborted", msg.StopReason, msg.Err)
	}
}

// sse frames data payloads as Anthropic does: the event name repeats the payload's type.
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		var head struct{ Type string }
		_ = json.Unmarshal([]byte(p), &head)
		b.WriteString("event: " + head.Type + "\ndata: " + p + "\n\n")
	}
	return b.String()
}

func TestToolSchemaFallback(t *testing.T) {
	url, bodies := serve(t, 200, nil, fixture(t, "text"))
	req := &llm.Request{Messages: []llm.Message{llm.UserText("x")}, Tools: []llm.ToolSpec{
		{Name: "none", Description: "No schema."},
		{Name: "broken", Schema: json.RawMessage(`{"type":`)},
	}}
	run(t, newModel(url, "k"), req)
	var want []any
	mustUnmarshal(t, `[
		{"name": "none", "description": "No schema.", "input_schema": {"type": "object"}},
		{"name": "broken", "input_schema": {"type": "object"}}
	]`, &want)
	if diff := cmp.Diff(want, requestBody(t, bodies)["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestWireDetails checks the headers, an error event known only by its type or only by its
// name, a body cut inside an event, and a base URL that is not one.
func TestWireDetails(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		_, _ = io.WriteString(w, fixture(t, "text"))
	}))
	t.Cleanup(srv.Close)
	if msg, _ := run(t, newModel(srv.URL, "k"), llmtest.Request()); msg.Err != nil {
		t.Fatalf("error %+v", msg.Err)
	}
	if header.Get("anthropic-version") != "2023-06-01" || header.Get("x-api-key") != "k" || header.Get("anthropic-beta") != "" {
		t.Errorf("headers %v: want anthropic-version 2023-06-01, the key in x-api-key, no anthropic-beta", header)
	}
	for _, tt := range []struct {
		name, body string
		kind       llm.ErrorKind
	}{
		{"type only", "data: " + start + "\n\ndata: " + `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n", llm.KindOverloaded},
		{"name only, not JSON", sse(start) + "event: error\ndata: upstream went away\n\n", llm.KindServer},
		{"cut inside an event", sse(start) + "event: content_block_start\ndata: {\"type\":", llm.KindIncompleteStream},
	} {
		url, _ := serve(t, 200, nil, tt.body)
		msg, _ := run(t, newModel(url, "k"), llmtest.Request())
		if msg.Err == nil || msg.Err.Kind != tt.kind {
			t.Errorf("%s: error %+v, want %s", tt.name, msg.Err, tt.kind)
		}
	}
	msg, _ := run(t, newModel("ftp://x", "k"), llmtest.Request())
	if msg.Err == nil || msg.Err.Kind != llm.KindInvalid || !strings.Contains(msg.Err.Message, "ftp://x") {
		t.Errorf("base URL ftp://x: error %+v, want invalid naming it", msg.Err)
	}
}
