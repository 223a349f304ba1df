// Package chattest holds the Chat Completions wire fixtures for the llmtest conformance suite,
// shared by the adapters that speak that wire (openaicompat, and openai with API chat). The
// fixtures replay what the servers send: "data: {chunk}" lines and a final "data: [DONE]".
package chattest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm/llmtest"
)

// Chunk returns one SSE event holding a chat.completion.chunk with the given choices (JSON
// array elements) and extra top-level fields (JSON object members, may be empty).
func Chunk(choices, extra string) string {
	s := `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","system_fingerprint":"fp_1","choices":[` + choices + `]`
	if extra != "" {
		s += "," + extra
	}
	return "data: " + s + "}\n\n"
}

// Delta returns a choice with the given delta members (JSON object members) and no finish
// reason.
func Delta(members string) string {
	return `{"index":0,"delta":{` + members + `},"logprobs":null,"finish_reason":null}`
}

// Content returns a chunk adding text.
func Content(text string) string { return Chunk(Delta(`"content":`+quote(text)), "") }

// Reasoning returns a chunk adding reasoning text in the reasoning_content field (vLLM,
// llama.cpp, DeepSeek).
func Reasoning(text string) string { return Chunk(Delta(`"reasoning_content":`+quote(text)), "") }

// CallStart returns a chunk opening tool call index with id and name.
func CallStart(index int, id, name string) string {
	return Chunk(Delta(fmt.Sprintf(`"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]`,
		index, quote(id), quote(name))), "")
}

// CallArgs returns a chunk adding arguments text to tool call index.
func CallArgs(index int, args string) string {
	return Chunk(Delta(fmt.Sprintf(`"tool_calls":[{"index":%d,"function":{"arguments":%s}}]`, index, quote(args))), "")
}

// Finish returns the chunk carrying the finish reason.
func Finish(reason string) string {
	return Chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":`+quote(reason)+`}`, "")
}

// Usage returns the usage chunk stream_options.include_usage asks for.
func Usage(prompt, completion, cached int) string {
	return Chunk("", fmt.Sprintf(`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`,
		prompt, completion, prompt+completion, cached))
}

// Done is the stream terminator.
const Done = "data: [DONE]\n\n"

// Role is the first chunk OpenAI sends.
var Role = Chunk(Delta(`"role":"assistant","content":"","refusal":null`), "")

// SSE joins events and appends the terminator.
func SSE(events ...string) string { return strings.Join(events, "") + Done }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Text is the CaseText stream.
var Text = SSE(Role, Content("Hello, "), Content("world!"), Finish("stop"), Usage(12, 5, 0))

// Error bodies as OpenAI sends them.
const (
	RateLimitBody = `{"error":{"message":"Rate limit reached for gpt-test in organization org-123 on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	ServerBody    = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	AuthBody      = `{"error":{"message":"Incorrect API key provided: sk-llmte****************6789. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	// FreeTierRateLimitBody is a rate limit whose text names billing (as OpenAI's free-tier
	// limits do): its code says retry, not stop.
	FreeTierRateLimitBody = `{"error":{"message":"Rate limit reached for gpt-test in organization org-123 on requests per day (RPD): Limit 200, Used 200, Requested 1. Please try again in 7m12s. Visit https://platform.openai.com/account/rate-limits to learn more. You can increase your rate limit by adding a payment method to your account at https://platform.openai.com/account/billing.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	// ContextBody is a context overflow that only its code names.
	ContextBody = `{"error":{"message":"Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	// QuotaEvent is a spent quota reported mid-stream, whose text reads like a transient
	// failure: its code says stop.
	QuotaEvent = "data: {\"error\":{\"message\":\"The request could not be completed. Please try again later.\",\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}\n\n"
	// OverloadedEvent is the error object a chat stream carries mid-stream.
	OverloadedEvent = "data: {\"error\":{\"message\":\"That model is currently overloaded with other requests. You can retry your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n"
)

// Fixture returns the llmtest fixtures of the chat wire. reasoning says whether the server
// streams readable reasoning (reasoning_content, as vLLM, llama.cpp and DeepSeek do); OpenAI's
// own chat wire has none, so CaseThinking does not apply to it.
func Fixture(reasoning bool) func(name string) ([]llmtest.Response, bool) {
	return func(name string) ([]llmtest.Response, bool) {
		one := func(body string) ([]llmtest.Response, bool) { return []llmtest.Response{{Body: body}}, true }
		switch name {
		case llmtest.CaseText:
			return one(Text)
		case llmtest.CaseThinking:
			if !reasoning {
				return nil, false
			}
			return one(SSE(Role, Reasoning("Let me "), Reasoning("think."), Content("Done."), Finish("stop"), Usage(10, 8, 0)))
		case llmtest.CaseToolCalls:
			return one(SSE(Role, Content("Looking."),
				CallStart(0, "call_1", "read"), CallArgs(0, `{"path":`), CallArgs(0, `"a.txt"}`),
				CallStart(1, "call_2", "bash"), CallArgs(1, `{"command":`), CallArgs(1, `"ls -la"}`),
				Finish("tool_calls"), Usage(20, 30, 0)))
		case llmtest.CaseSplitArgs:
			return one(SSE(Role, CallStart(0, "call_9", "write"),
				CallArgs(0, `{"pa`), CallArgs(0, `th":"dir/`), CallArgs(0, `file.go",`), CallArgs(0, `"content":`),
				CallArgs(0, `"package `), CallArgs(0, `main\n"}`),
				Finish("tool_calls"), Usage(20, 30, 0)))
		case llmtest.CaseUsage:
			return one(SSE(Role, Content("ok"), Finish("stop"), Usage(150, 20, 50)))
		case llmtest.CaseNoUsage:
			return one(SSE(Role, Content("ok"), Finish("stop")))
		case llmtest.CaseLength:
			return one(SSE(Role, Content("Writing."), CallStart(0, "call_3", "write"),
				CallArgs(0, `{"path":"a.txt",`), CallArgs(0, `"content":"abc`), Finish("length"), Usage(20, 1024, 0)))
		case llmtest.CaseInvalidArgs:
			return one(SSE(Role, CallStart(0, "call_4", "read"), CallArgs(0, `{"path":"a.txt",}`),
				Finish("tool_calls"), Usage(20, 10, 0)))
		case llmtest.CaseRateLimit:
			return []llmtest.Response{
				{Status: 429, Header: http.Header{"Retry-After": {"2"}}, Body: RateLimitBody},
				{Body: Text},
			}, true
		case llmtest.CaseServerError:
			return []llmtest.Response{{Status: 500, Body: ServerBody}, {Body: Text}}, true
		case llmtest.CaseOverloaded:
			return []llmtest.Response{
				{Body: Role + Content("Hel") + OverloadedEvent},
				{Body: Text},
			}, true
		case llmtest.CaseCut:
			body := SSE(Role, Content("Hello, "), Content("world!"), Finish("stop"), Usage(12, 5, 0))
			return []llmtest.Response{{Body: body, CutAfter: len(Role) + len(Content("Hello, ")) + 20}, {Body: Text}}, true
		case llmtest.CaseCutMidEvent:
			next := Content("lo")
			return []llmtest.Response{{Body: Role + Content("Hel") + next[:len(next)/2]}, {Body: Text}}, true
		case llmtest.CaseNoTerminal:
			return []llmtest.Response{{Body: Role + Content("Hel")}, {Body: Text}}, true
		case llmtest.CaseIdle:
			return []llmtest.Response{{Body: Role + Content("Hel"), Hang: true}, {Body: Text}}, true
		case llmtest.CaseNoHeaders:
			return []llmtest.Response{{Stall: true}, {Body: Text}}, true
		case llmtest.CaseAuth:
			return []llmtest.Response{{Status: 401, Body: AuthBody}}, true
		case llmtest.CaseHang:
			return []llmtest.Response{{Body: Role + Content("Hel"), Hang: true}}, true
		}
		return nil, false
	}
}

// Expect describes the dialect a request must follow.
type Expect struct {
	Model string
	// MaxTokensField is the field that must carry llmtest.Request's 1024 (the other must be
	// absent).
	MaxTokensField string
	// Strict says whether tool definitions carry "strict": false.
	Strict bool
	// APIKey is the expected bearer token; empty means no Authorization header.
	APIKey string
}

// CheckRequest returns a llmtest.Harness.CheckRequest for the chat wire: llmtest.Request()
// mapped onto /chat/completions.
func CheckRequest(e Expect) func(t *testing.T, r *http.Request, body []byte) {
	return func(t *testing.T, r *http.Request, body []byte) {
		t.Helper()
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			t.Errorf("request %s %s, want POST .../chat/completions", r.Method, r.URL.Path)
		}
		wantAuth := ""
		if e.APIKey != "" {
			wantAuth = "Bearer " + e.APIKey
		}
		if got := r.Header.Get("Authorization"); got != wantAuth {
			t.Errorf("Authorization = %q, want %q", got, wantAuth)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("request body is not JSON: %v\n%s", err, body)
		}
		other := "max_tokens"
		if e.MaxTokensField == "max_tokens" {
			other = "max_completion_tokens"
		}
		strict := ""
		if e.Strict {
			strict = `,"strict":false`
		}
		schema := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`
		want := map[string]string{
			"model":          quote(e.Model),
			"stream":         `true`,
			"stream_options": `{"include_usage":true}`,
			e.MaxTokensField: `1024`,
			"messages": `[
				{"role":"system","content":"You are a test."},
				{"role":"user","content":"List the files."},
				{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_0","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]},
				{"role":"tool","tool_call_id":"call_0","content":"a.txt\nb.txt"},
				{"role":"user","content":"Now read a.txt."}]`,
			"tools": `[
				{"type":"function","function":{"name":"read","description":"Read a file.","parameters":` + schema + strict + `}},
				{"type":"function","function":{"name":"ls","description":"List a directory.","parameters":` + schema + strict + `}}]`,
		}
		for k, w := range want {
			var wv any
			if err := json.Unmarshal([]byte(w), &wv); err != nil {
				t.Fatalf("bad expectation for %s: %v", k, err)
			}
			if !reflect.DeepEqual(got[k], wv) {
				gj, _ := json.Marshal(got[k])
				t.Errorf("request %s = %s\nwant %s", k, gj, w)
			}
		}
		if _, ok := got[other]; ok {
			t.Errorf("request has %s, want only %s", other, e.MaxTokensField)
		}
	}
}
