package openaicompat_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/llmtest"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// captured is the last request a test server saw.
type captured struct {
	mu     sync.Mutex
	header http.Header
	body   []byte
}

func (c *captured) get() (http.Header, map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m map[string]any
	_ = json.Unmarshal(c.body, &m)
	return c.header, m
}

// serve answers every request with status and body.
func serve(t *testing.T, status int, body string) (string, *captured) {
	t.Helper()
	c := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.header, c.body = r.Header.Clone(), b
		c.mu.Unlock()
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, c
}

func run(t *testing.T, cfg openaicompat.Config, req *llm.Request) (*llm.Message, []llm.Event) {
	t.Helper()
	var evs []llm.Event
	msg := newModel(t, cfg).Stream(context.Background(), req, func(ev llm.Event) { evs = append(evs, ev) })
	if len(evs) == 0 || evs[len(evs)-1].Message != msg {
		t.Fatalf("the last event does not carry the returned message")
	}
	return msg, evs
}

func streamBody(t *testing.T, body string) (*llm.Message, []llm.Event) {
	t.Helper()
	url, _ := serve(t, http.StatusOK, body)
	return run(t, openaicompat.Config{Model: "m", BaseURL: url}, llmtest.Request())
}

func wantCalls(t *testing.T, m *llm.Message, want ...llm.ToolCall) {
	t.Helper()
	var got []llm.ToolCall
	for _, c := range m.ToolCalls() {
		got = append(got, *c)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %+v\nwant %+v", got, want)
	}
}

func TestMissingToolCallIDs(t *testing.T) {
	m, evs := streamBody(t, ct.SSE(
		ct.Chunk(ct.Delta(`"tool_calls":[{"index":0,"type":"function","function":{"name":"read","arguments":"{\"path\":"}}]`), ""),
		ct.Chunk(ct.Delta(`"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]`), ""),
		ct.Chunk(ct.Delta(`"tool_calls":[{"index":1,"id":"","type":"function","function":{"name":"ls","arguments":"{}"}}]`), ""),
		ct.Finish("tool_calls")))
	if m.StopReason != llm.StopToolUse {
		t.Fatalf("stop = %s (%v), want toolUse", m.StopReason, m.Err)
	}
	wantCalls(t, m, llm.ToolCall{ID: "call_0", Name: "read", Arguments: `{"path":"a.txt"}`},
		llm.ToolCall{ID: "call_1", Name: "ls", Arguments: `{}`})
	for _, ev := range evs {
		if ev.Type == llm.EventToolCallStart && (ev.Call.ID == "" || ev.Call.Name == "") {
			t.Errorf("toolcall_start without id or name: %+v", ev.Call)
		}
	}
}

func TestSynthesizedIDsAreUnique(t *testing.T) {
	m, _ := streamBody(t, ct.SSE(
		ct.Chunk(ct.Delta(`"tool_calls":[{"index":0,"id":"call_1","function":{"name":"read","arguments":"{}"}}]`), ""),
		ct.Chunk(ct.Delta(`"tool_calls":[{"index":1,"function":{"name":"ls","arguments":"{}"}}]`), ""),
		ct.Finish("tool_calls")))
	wantCalls(t, m, llm.ToolCall{ID: "call_1", Name: "read", Arguments: `{}`},
		llm.ToolCall{ID: "call_1_2", Name: "ls", Arguments: `{}`})
}

func TestArgumentsInOneChunk(t *testing.T) {
	t.Run("string", func(t *testing.T) {
		m, _ := streamBody(t, ct.SSE(
			ct.Chunk(ct.Delta(`"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}]`), ""),
			ct.Finish("tool_calls")))
		wantCalls(t, m, llm.ToolCall{ID: "call_a", Name: "read", Arguments: `{"path":"a.txt"}`})
	})
	t.Run("object", func(t *testing.T) {
		m, _ := streamBody(t, ct.SSE(
			ct.Chunk(ct.Delta(`"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":{"path":"a.txt"}}}]`), ""),
			ct.Finish("tool_calls")))
		wantCalls(t, m, llm.ToolCall{ID: "call_a", Name: "read", Arguments: `{"path":"a.txt"}`})
	})
	t.Run("no index, one call per delta", func(t *testing.T) {
		m, _ := streamBody(t, ct.SSE(
			ct.Chunk(ct.Delta(`"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},{"id":"c2","type":"function","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]`), ""),
			ct.Finish("tool_calls")))
		wantCalls(t, m, llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a"}`},
			llm.ToolCall{ID: "c2", Name: "read", Arguments: `{"path":"b"}`})
	})
	t.Run("index reused for a new call", func(t *testing.T) {
		m, _ := streamBody(t, ct.SSE(
			ct.Chunk(ct.Delta(`"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]`), ""),
			ct.Chunk(ct.Delta(`"tool_calls":[{"index":0,"id":"c2","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]`), ""),
			ct.Finish("tool_calls")))
		wantCalls(t, m, llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a"}`},
			llm.ToolCall{ID: "c2", Name: "read", Arguments: `{"path":"b"}`})
	})
}

func TestMissingFinishReason(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		m, _ := streamBody(t, ct.SSE(ct.Content("Hi"), ct.Content(" there")))
		if m.StopReason != llm.StopEnd || m.Text() != "Hi there" {
			t.Errorf("stop %s text %q (err %v), want stop and the text", m.StopReason, m.Text(), m.Err)
		}
		if m.Usage == nil || *m.Usage != (llm.Usage{}) {
			t.Errorf("usage = %+v, want zero", m.Usage)
		}
	})
	t.Run("tool calls, [DONE]", func(t *testing.T) {
		m, _ := streamBody(t, ct.SSE(ct.CallStart(0, "c1", "read"), ct.CallArgs(0, `{"path":"a"}`)))
		if m.StopReason != llm.StopToolUse {
			t.Errorf("stop = %s (%v), want toolUse", m.StopReason, m.Err)
		}
	})
	// Neither a finish_reason nor [DONE]: the body ended early, whatever the server.
	t.Run("tool calls, no [DONE]", func(t *testing.T) {
		m, _ := streamBody(t, ct.CallStart(0, "c1", "read")+ct.CallArgs(0, `{"path":"a"}`))
		if m.StopReason != llm.StopError || m.Err.Kind != llm.KindIncompleteStream || !m.Err.Retryable {
			t.Errorf("stop = %s (%v), want a retryable incomplete stream", m.StopReason, m.Err)
		}
	})
	t.Run("stop after tool calls", func(t *testing.T) {
		m, _ := streamBody(t, ct.SSE(ct.CallStart(0, "c1", "read"), ct.CallArgs(0, `{"path":"a"}`), ct.Finish("stop")))
		if m.StopReason != llm.StopToolUse {
			t.Errorf("stop = %s, want toolUse: the calls decide", m.StopReason)
		}
	})
}

func TestOtherFinishes(t *testing.T) {
	m, _ := streamBody(t, ct.SSE(ct.Content("Hi"), ct.Finish("content_filter")))
	if m.StopReason != llm.StopError || m.Err == nil || m.Err.Kind != llm.KindInvalid || m.Err.Retryable {
		t.Errorf("content_filter: stop %s err %+v, want a terminal invalid error", m.StopReason, m.Err)
	}
	m, _ = streamBody(t, "")
	if m.StopReason != llm.StopError || m.Err == nil || !m.Err.Retryable {
		t.Errorf("empty stream: stop %s err %+v, want a retryable error", m.StopReason, m.Err)
	}
	m, _ = streamBody(t, "data: {not json}\n\n")
	if m.StopReason != llm.StopError || m.Err == nil || m.Err.Kind != llm.KindProtocol {
		t.Errorf("malformed chunk: stop %s err %+v, want a protocol error", m.StopReason, m.Err)
	}
}

func TestReasoningField(t *testing.T) {
	m, _ := streamBody(t, ct.SSE(ct.Chunk(ct.Delta(`"reasoning":"Hmm."`), ""), ct.Content("Yes.")))
	if len(m.Content) != 2 || m.Content[0].Type != llm.PartThinking || m.Content[0].Text != "Hmm." || m.Text() != "Yes." {
		t.Errorf("content = %+v, want thinking then text", m.Content)
	}
}

func TestUsageDialects(t *testing.T) {
	// DeepSeek reports cache hits as prompt_cache_hit_tokens.
	m, _ := streamBody(t, ct.SSE(ct.Content("ok"), ct.Finish("stop"),
		ct.Chunk("", `"usage":{"prompt_tokens":150,"completion_tokens":20,"total_tokens":170,"prompt_cache_hit_tokens":50,"prompt_cache_miss_tokens":100}`)))
	if m.Usage == nil || *m.Usage != (llm.Usage{Input: 100, Output: 20, CacheRead: 50}) {
		t.Errorf("usage = %+v, want input 100 output 20 cacheRead 50", m.Usage)
	}
	// Usage on the finish chunk, with pricing.
	url, _ := serve(t, http.StatusOK, ct.SSE(ct.Chunk(`{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}`,
		`"usage":{"prompt_tokens":1000000,"completion_tokens":1000000,"total_tokens":2000000}`)))
	m, _ = run(t, openaicompat.Config{Model: "m", BaseURL: url, Pricing: llm.Pricing{Input: 1, Output: 2}}, llmtest.Request())
	if m.Usage == nil || m.Usage.Cost.Total != 3 {
		t.Errorf("usage = %+v, want cost 3", m.Usage)
	}
}

func TestKeylessRequest(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/nowhere")
	url, c := serve(t, http.StatusOK, ct.Text)
	m, _ := run(t, openaicompat.Config{Model: "m", BaseURL: url}, llmtest.Request())
	if m.StopReason != llm.StopEnd {
		t.Fatalf("stop = %s (%v)", m.StopReason, m.Err)
	}
	h, _ := c.get()
	if v, ok := h["Authorization"]; ok {
		t.Errorf("keyless request sent Authorization %q", v)
	}
}

func TestErrorBodies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		kind   llm.ErrorKind
		text   string
	}{
		{"plain text", 404, "404 page not found\n", llm.KindInvalid, "404 page not found"},
		{"ollama string error", 404, `{"error":"model \"qwen\" not found, try pulling it first"}`, llm.KindInvalid, `model "qwen" not found`},
		{"context overflow", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, llm.KindContext, "maximum context length"},
		{"quota", 429, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`, llm.KindSpendLimit, "quota"},
		{"key echoed", 400, `{"error":{"message":"bad key ` + llmtest.APIKey + `"}}`, llm.KindInvalid, "bad key [redacted]"},
		{"empty", 503, ``, llm.KindServer, "503"},
		// The code decides; the text would say otherwise (or nothing).
		{"rate limit that mentions billing", 429, ct.FreeTierRateLimitBody, llm.KindRateLimit, "Rate limit reached"},
		{"context overflow by its code only", 400, ct.ContextBody, llm.KindContext, "reduce the length"},
		{"invalid key", 401, ct.AuthBody, llm.KindAuth, "Incorrect API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := serve(t, tc.status, tc.body)
			m, _ := run(t, openaicompat.Config{Model: "m", BaseURL: url, APIKey: llmtest.APIKey}, llmtest.Request())
			if m.StopReason != llm.StopError || m.Err == nil {
				t.Fatalf("stop = %s, want error", m.StopReason)
			}
			if m.Err.Kind != tc.kind || m.Err.Status != tc.status || !strings.Contains(m.Err.Message, tc.text) {
				t.Errorf("err = %+v, want kind %s status %d message containing %q", m.Err, tc.kind, tc.status, tc.text)
			}
			if strings.Contains(m.Err.Message, llmtest.APIKey) {
				t.Errorf("the error leaks the key: %q", m.Err.Message)
			}
		})
	}
}

// TestStreamErrorObjects classifies error objects inside a 200 stream by their code and type
// first, and by their text only when those say nothing known.
func TestStreamErrorObjects(t *testing.T) {
	for _, tc := range []struct {
		name      string
		event     string
		kind      llm.ErrorKind
		retryable bool
	}{
		{"quota whose text says try again", ct.QuotaEvent, llm.KindSpendLimit, false},
		{"server_error type saying overloaded", ct.OverloadedEvent, llm.KindOverloaded, true},
		{"rate limit code", "data: " + ct.FreeTierRateLimitBody + "\n\n", llm.KindRateLimit, true},
		{"no fields, text only", "data: {\"error\":{\"message\":\"This model's maximum context length is 8192 tokens.\"}}\n\n", llm.KindContext, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := streamBody(t, ct.Role+ct.Content("Hel")+tc.event)
			if m.StopReason != llm.StopError || m.Err == nil || m.Err.Kind != tc.kind || m.Err.Retryable != tc.retryable || m.Err.Status != 0 {
				t.Errorf("stop %s err %+v, want kind %s retryable %v status 0", m.StopReason, m.Err, tc.kind, tc.retryable)
			}
		})
	}
}

func TestRetryAfterMs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after-ms", "1500")
		w.Header().Set("retry-after", "9")
		w.WriteHeader(429)
		_, _ = io.WriteString(w, ct.RateLimitBody)
	}))
	defer srv.Close()
	m, _ := run(t, openaicompat.Config{Model: "m", BaseURL: srv.URL}, llmtest.Request())
	if m.Err == nil || m.Err.RetryAfterMs != 1500 {
		t.Errorf("err = %+v, want retry-after-ms 1500 preferred", m.Err)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, _ := run(t, openaicompat.Config{Model: "m", BaseURL: url, APIKey: llmtest.APIKey}, llmtest.Request())
	if m.Err == nil || m.Err.Kind != llm.KindNetwork || !m.Err.Retryable {
		t.Errorf("err = %+v, want a retryable network error", m.Err)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	url, _ := serve(t, http.StatusOK, ct.Text)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := newModel(t, openaicompat.Config{Model: "m", BaseURL: url}).Stream(ctx, llmtest.Request(), func(llm.Event) {})
	if m.StopReason != llm.StopAborted {
		t.Errorf("stop = %s (%v), want aborted", m.StopReason, m.Err)
	}
}

func TestRequestDialect(t *testing.T) {
	url, c := serve(t, http.StatusOK, ct.Text)
	req := llmtest.Request()
	req.Thinking = llm.ThinkingHigh
	req.SessionID = "sess-1"
	req.MaxTokens = 0
	run(t, openaicompat.Config{Model: "gpt-4.1", BaseURL: url, MaxTokens: 777, Compat: openaicompat.OpenAI()}, req)
	_, body := c.get()
	if body["max_completion_tokens"] != float64(777) || body["max_tokens"] != nil {
		t.Errorf("max tokens: %v / %v, want max_completion_tokens 777 from the config", body["max_completion_tokens"], body["max_tokens"])
	}
	if body["reasoning_effort"] != "high" || body["prompt_cache_key"] != "sess-1" {
		t.Errorf("reasoning_effort %v prompt_cache_key %v", body["reasoning_effort"], body["prompt_cache_key"])
	}

	run(t, openaicompat.Config{Model: "m", BaseURL: url}, req)
	_, body = c.get()
	for _, k := range []string{"max_tokens", "max_completion_tokens", "reasoning_effort", "prompt_cache_key"} {
		if _, ok := body[k]; ok {
			t.Errorf("the default dialect sent %s", k)
		}
	}
}

func TestHistoryMapping(t *testing.T) {
	url, c := serve(t, http.StatusOK, ct.Text)
	png := []byte{0x89, 'P', 'N', 'G'}
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, StopReason: llm.StopError, Content: []llm.Part{llm.Text("broken")}, Err: &llm.Error{Kind: llm.KindNetwork, Message: "cut"}},
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Part{
			llm.Thinking("private"), llm.Call("c1", "shot", `{}`), llm.Call("c2", "write", `{"path":"a","content":"ab`)}},
		{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "shot", Content: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: png}}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.Text("look"), {Type: llm.PartImage, MIMEType: "image/png", Data: png}}},
	}}
	run(t, openaicompat.Config{Model: "m", BaseURL: url}, req)
	_, body := c.get()
	want := `[
		{"role":"user","content":"go"},
		{"role":"assistant","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"shot","arguments":"{}"}},
			{"id":"c2","type":"function","function":{"name":"write","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"(image attached below)"},
		{"role":"tool","tool_call_id":"c2","content":"No result provided"},
		{"role":"user","content":[{"type":"text","text":"Images from the tool results above:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}}]},
		{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}}]}]`
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(body["messages"], w) {
		got, _ := json.Marshal(body["messages"])
		t.Errorf("messages = %s\nwant %s", got, want)
	}
	if _, ok := body["tools"]; ok {
		t.Errorf("a request without tools sent tools")
	}
}

func TestInvalidSchema(t *testing.T) {
	url, c := serve(t, http.StatusOK, ct.Text)
	req := llmtest.Request()
	req.Tools[0].Schema = []byte(`{"type":`)
	m, _ := run(t, openaicompat.Config{Model: "m", BaseURL: url}, req)
	if m.Err == nil || m.Err.Kind != llm.KindInvalid || m.Err.Retryable {
		t.Errorf("err = %+v, want a terminal invalid error", m.Err)
	}
	if h, _ := c.get(); h != nil {
		t.Errorf("a request with an invalid schema was sent")
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []openaicompat.Config{
		{BaseURL: "http://localhost:11434/v1"},
		{Model: "m"},
		{Model: "m", BaseURL: "localhost:11434"},
		{Model: "m", BaseURL: "http://localhost:11434/v1", Compat: openaicompat.Compat{MaxTokensField: "max_output"}},
	} {
		if _, err := openaicompat.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
}

// TestChatCompleteness: the rule of a complete chat stream. A finish_reason ends the answer
// whether [DONE] follows or the body simply ends; [DONE] alone (a lenient server) ends it too;
// a body that ends inside an event, or with neither, is a retryable incomplete stream.
func TestChatCompleteness(t *testing.T) {
	usage := ct.Usage(12, 5, 0)
	for _, tc := range []struct {
		name     string
		body     string
		complete bool
	}{
		{"finish_reason and [DONE]", ct.Text, true},
		{"finish_reason, then the body ends", ct.Content("Hi") + ct.Finish("stop") + usage, true},
		{"[DONE] without finish_reason", ct.SSE(ct.Content("Hi")), true},
		{"[DONE] without its blank line", ct.Content("Hi") + "data: [DONE]", true},
		{"finish_reason, then the body ends inside the usage event", ct.Content("Hi") + ct.Finish("stop") + usage[:len(usage)/2], false},
		{"the body ends inside a content event", ct.Content("Hi") + ct.Content("there")[:30], false},
		{"neither finish_reason nor [DONE]", ct.Content("Hi"), false},
		{"only [DONE]", ct.Done, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := streamBody(t, tc.body)
			if tc.complete {
				if m.Failed() {
					t.Errorf("stop %s err %v, want a complete answer", m.StopReason, m.Err)
				}
				return
			}
			if m.StopReason != llm.StopError || m.Err.Kind != llm.KindIncompleteStream || !m.Err.Retryable {
				t.Errorf("stop %s err %+v, want a retryable incomplete stream", m.StopReason, m.Err)
			}
		})
	}
}
