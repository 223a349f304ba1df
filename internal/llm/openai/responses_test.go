package openai_test

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
	"github.com/reinhq/rein/internal/llm/openai"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// serve answers every request with a 200 event stream body and records the last request body.
func serve(t *testing.T, body string) (string, func() map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var last []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = b
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() map[string]any {
		mu.Lock()
		defer mu.Unlock()
		var m map[string]any
		_ = json.Unmarshal(last, &m)
		return m
	}
}

func stream(t *testing.T, body string, req *llm.Request) (*llm.Message, map[string]any) {
	t.Helper()
	url, last := serve(t, body)
	m := newModel(t, openai.Config{Model: "gpt-test", BaseURL: url, APIKey: llmtest.APIKey})
	var evs []llm.Event
	msg := m.Stream(context.Background(), req, func(ev llm.Event) { evs = append(evs, ev) })
	if len(evs) == 0 || evs[len(evs)-1].Message != msg {
		t.Fatal("the last event does not carry the returned message")
	}
	return msg, last()
}

func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("%s = %s\nwant %s", what, g, want)
	}
}

func TestResponsesMessage(t *testing.T) {
	body := newWire().reasoning("rs_1", []string{"First."}, []string{"Sec", "ond."}).text("msg_1", "Hi.").
		call("fc_1", "call_1", "read", true, `{"path":"a"}`).completed(10, 20, 0)
	msg, _ := stream(t, body, llmtest.Request())
	if msg.StopReason != llm.StopToolUse || msg.ResponseID != "resp_1" || msg.Provider != llm.ProviderOpenAI ||
		msg.API != llm.APIOpenAIResponses || msg.Model != "gpt-test" {
		t.Fatalf("message = %+v", msg)
	}
	if len(msg.Content) != 3 {
		t.Fatalf("content = %+v, want thinking, text, call", msg.Content)
	}
	th, tx, call := msg.Content[0], msg.Content[1], msg.Content[2]
	if th.Type != llm.PartThinking || th.Text != "First.\n\nSecond." || !strings.Contains(th.Signature, `"encrypted_content":"gAAAAABenc-rs_1"`) {
		t.Errorf("thinking part = %+v", th)
	}
	if tx.Text != "Hi." || tx.Signature != "msg_1" {
		t.Errorf("text part = %+v, want signature msg_1", tx)
	}
	if call.Call == nil || call.Call.ID != "call_1" || call.Signature != "fc_1" {
		t.Errorf("call part = %+v, want call_1 with signature fc_1", call)
	}
}

func TestResponsesEncryptedReasoningWithoutSummary(t *testing.T) {
	w := newWire()
	w.ev("response.output_item.added", `"output_index":0,"item":{"id":"rs_9","type":"reasoning","summary":[]}`)
	w.ev("response.output_item.done", `"output_index":0,"item":{"id":"rs_9","type":"reasoning","summary":[],"encrypted_content":"gAAAA9"}`)
	msg, _ := stream(t, w.text("msg_1", "ok").completed(1, 1, 0), llmtest.Request())
	if len(msg.Content) != 2 || msg.Content[0].Type != llm.PartThinking || msg.Content[0].Text != "" || msg.Content[0].Signature == "" {
		t.Errorf("content = %+v, want an empty thinking part keeping the encrypted reasoning, then text", msg.Content)
	}
}

func TestResponsesCallOnlyInDoneEvent(t *testing.T) {
	w := newWire()
	w.ev("response.output_item.done", `"output_index":0,"item":{"id":"fc_7","type":"function_call","status":"completed","arguments":"{\"path\":\"x\"}","call_id":"call_7","name":"read"}`)
	msg, _ := stream(t, w.completed(1, 1, 0), llmtest.Request())
	calls := msg.ToolCalls()
	if msg.StopReason != llm.StopToolUse || len(calls) != 1 || *calls[0] != (llm.ToolCall{ID: "call_7", Name: "read", Arguments: `{"path":"x"}`}) {
		t.Errorf("stop %s calls %+v", msg.StopReason, calls)
	}
}

func TestResponsesFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		body      string
		kind      llm.ErrorKind
		retryable bool
	}{
		{"failed server error", newWire().textPartial("msg_1", "a").String() +
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":9,\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The server had an error processing your request.\"},\"output\":[]}}\n\n",
			llm.KindServer, true},
		{"error event rate limit", newWire().String() +
			"event: error\ndata: {\"type\":\"error\",\"sequence_number\":2,\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit reached.\",\"param\":null}\n\n",
			llm.KindRateLimit, true},
		{"error event invalid prompt", newWire().String() +
			"event: error\ndata: {\"type\":\"error\",\"sequence_number\":2,\"code\":\"invalid_prompt\",\"message\":\"Invalid prompt.\",\"param\":null}\n\n",
			llm.KindInvalid, false},
		{"nested error object", newWire().String() +
			"event: error\ndata: {\"type\":\"error\",\"sequence_number\":2,\"error\":{\"type\":\"server_error\",\"code\":\"server_error\",\"message\":\"boom\"}}\n\n",
			llm.KindServer, true},
		// The code decides; the text would say otherwise.
		{"failed rate limit that mentions billing", newWire().textPartial("msg_1", "a").String() +
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":9,\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit reached. You can increase your rate limit by adding a payment method at https://platform.openai.com/account/billing.\"},\"output\":[]}}\n\n",
			llm.KindRateLimit, true},
		{"error event context overflow saying try again", newWire().String() +
			"event: error\ndata: {\"type\":\"error\",\"sequence_number\":2,\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the limit of this model; try again with less.\",\"param\":\"input\"}\n\n",
			llm.KindContext, false},
		{"content filter", newWire().textPartial("msg_1", "a").incomplete("content_filter", 1, 1), llm.KindInvalid, false},
		{"no terminal event", newWire().text("msg_1", "Hello").String(), llm.KindIncompleteStream, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, _ := stream(t, tc.body, llmtest.Request())
			if msg.StopReason != llm.StopError || msg.Err == nil {
				t.Fatalf("stop = %s, want error", msg.StopReason)
			}
			if msg.Err.Kind != tc.kind || msg.Err.Retryable != tc.retryable {
				t.Errorf("err = %+v, want kind %s retryable %v", msg.Err, tc.kind, tc.retryable)
			}
		})
	}
}

func TestResponsesThinkingRequest(t *testing.T) {
	req := llmtest.Request()
	req.Thinking = llm.ThinkingMedium
	req.SessionID = "sess-7"
	_, body := stream(t, textStream, req)
	jsonEq(t, "reasoning", body["reasoning"], `{"effort":"medium","summary":"auto"}`)
	jsonEq(t, "include", body["include"], `["reasoning.encrypted_content"]`)
	jsonEq(t, "prompt_cache_key", body["prompt_cache_key"], `"sess-7"`)
}

// history returns a conversation whose assistant message came from model.
func history(model string) *llm.Request {
	reasoning := `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAAAB-x"}`
	return &llm.Request{Messages: []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, Provider: llm.ProviderOpenAI, API: llm.APIOpenAIResponses, Model: model,
			StopReason: llm.StopToolUse, Content: []llm.Part{
				{Type: llm.PartThinking, Text: "Plan.", Signature: reasoning},
				{Type: llm.PartText, Text: "Reading.", Signature: "msg_1"},
				{Type: llm.PartToolCall, Call: &llm.ToolCall{ID: "call_1", Name: "read", Arguments: `{"path":"a"}`}, Signature: "fc_1"},
				{Type: llm.PartToolCall, Call: &llm.ToolCall{ID: "call_2", Name: "read", Arguments: `{"path":`}, Signature: "fc_2"},
			}},
		{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read", Content: []llm.Part{llm.Text("A"),
			{Type: llm.PartImage, MIMEType: "image/png", Data: []byte("img")}}},
	}}
}

func TestResponsesReplaySameModel(t *testing.T) {
	_, body := stream(t, textStream, history("gpt-test"))
	jsonEq(t, "input", body["input"], `[
		{"role":"user","content":"go"},
		{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAAAB-x"},
		{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]},
		{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a\"}"},
		{"type":"function_call","id":"fc_2","call_id":"call_2","name":"read","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"A"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,aW1n"}]},
		{"type":"function_call_output","call_id":"call_2","output":"No result provided"}]`)
	if _, ok := body["instructions"]; ok {
		t.Errorf("instructions sent without a system prompt")
	}
}

func TestResponsesReplayOtherModel(t *testing.T) {
	_, body := stream(t, textStream, history("gpt-other"))
	jsonEq(t, "input", body["input"], `[
		{"role":"user","content":"go"},
		{"role":"assistant","content":"Reading."},
		{"type":"function_call","call_id":"call_1","name":"read","arguments":"{\"path\":\"a\"}"},
		{"type":"function_call","call_id":"call_2","name":"read","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"A"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,aW1n"}]},
		{"type":"function_call_output","call_id":"call_2","output":"No result provided"}]`)
}

func TestChatRecordsProviderOpenAI(t *testing.T) {
	url, _ := serve(t, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	m := newModel(t, openai.Config{Model: "gpt-4.1", BaseURL: url, API: llm.APIOpenAIChat})
	msg := m.Stream(context.Background(), llmtest.Request(), func(llm.Event) {})
	if msg.Provider != llm.ProviderOpenAI || msg.API != llm.APIOpenAIChat || msg.Text() != "hi" {
		t.Errorf("message = %+v", msg)
	}
}

func TestNew(t *testing.T) {
	if _, err := openai.New(openai.Config{Model: "gpt-5"}); err != nil {
		t.Errorf("default config: %v", err)
	}
	for _, cfg := range []openai.Config{{}, {Model: "gpt-5", API: "anthropic-messages"}, {Model: "gpt-5", BaseURL: "::"}} {
		if m, err := openai.New(cfg); err == nil || m != nil {
			t.Errorf("New(%+v) = %v, %v; want an error", cfg, m, err)
		}
	}
}

// TestResponsesHTTPErrorCodes classifies HTTP error answers by the error object's code before
// its text: a rate limit whose text names billing is retried, a spent quota is not.
func TestResponsesHTTPErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		kind      llm.ErrorKind
		retryable bool
	}{
		{"rate limit that mentions billing", 429, ct.FreeTierRateLimitBody, llm.KindRateLimit, true},
		{"spent quota", 429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, llm.KindSpendLimit, false},
		{"context overflow by its code only", 400, ct.ContextBody, llm.KindContext, false},
		{"invalid key", 401, authBody, llm.KindAuth, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			m := newModel(t, openai.Config{Model: "gpt-test", BaseURL: srv.URL, APIKey: llmtest.APIKey})
			msg := m.Stream(context.Background(), llmtest.Request(), func(llm.Event) {})
			if msg.Err == nil || msg.Err.Kind != tc.kind || msg.Err.Retryable != tc.retryable || msg.Err.Status != tc.status {
				t.Errorf("err = %+v, want kind %s retryable %v status %d", msg.Err, tc.kind, tc.retryable, tc.status)
			}
		})
	}
}

// TestResponsesFinishReason checks the provider's own word for the ending that telemetry
// reports: the response's status, or the reason it is incomplete.
func TestResponsesFinishReason(t *testing.T) {
	for body, want := range map[string]string{
		textStream: "completed",
		newWire().textPartial("msg_1", "a").incomplete("max_output_tokens", 1, 1): "max_output_tokens",
		newWire().textPartial("msg_1", "a").incomplete("content_filter", 1, 1):    "content_filter",
	} {
		if msg, _ := stream(t, body, llmtest.Request()); msg.FinishReason != want {
			t.Errorf("finish reason %q, want %q", msg.FinishReason, want)
		}
	}
}
