package openai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm/llmtest"
)

// wire builds a Responses API event stream as the server sends it: "event: <type>" and
// "data: {json}" lines, with sequence numbers and output indexes.
type wire struct {
	b   strings.Builder
	seq int
	out int // next output_index
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ev appends one event; fields are JSON object members after type and sequence_number.
func (w *wire) ev(typ, fields string) *wire {
	data := fmt.Sprintf(`{"type":%q,"sequence_number":%d`, typ, w.seq)
	if fields != "" {
		data += "," + fields
	}
	w.seq++
	fmt.Fprintf(&w.b, "event: %s\ndata: %s}\n\n", typ, data)
	return w
}

const respHead = `"id":"resp_1","object":"response","created_at":1700000000,"model":"gpt-test","instructions":"You are a test.","parallel_tool_calls":true,"tool_choice":"auto","tools":[],"store":false`

func (w *wire) created() *wire {
	w.ev("response.created", `"response":{`+respHead+`,"status":"in_progress","output":[],"usage":null}`)
	return w.ev("response.in_progress", `"response":{`+respHead+`,"status":"in_progress","output":[],"usage":null}`)
}

func (w *wire) text(id string, deltas ...string) *wire {
	oi := w.out
	w.out++
	w.ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"message","status":"in_progress","role":"assistant","content":[]}`, oi, id))
	w.ev("response.content_part.added", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`, id, oi))
	for _, d := range deltas {
		w.ev("response.output_text.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"delta":%s,"logprobs":[]`, id, oi, q(d)))
	}
	full := q(strings.Join(deltas, ""))
	w.ev("response.output_text.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"text":%s,"logprobs":[]`, id, oi, full))
	w.ev("response.content_part.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"part":{"type":"output_text","text":%s,"annotations":[]}`, id, oi, full))
	return w.ev("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}`, oi, id, full))
}

// textPartial opens a message and sends deltas without finishing it.
func (w *wire) textPartial(id string, deltas ...string) *wire {
	oi := w.out
	w.out++
	w.ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"message","status":"in_progress","role":"assistant","content":[]}`, oi, id))
	for _, d := range deltas {
		w.ev("response.output_text.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"delta":%s,"logprobs":[]`, id, oi, q(d)))
	}
	return w
}

// reasoning sends a reasoning item whose summary arrives in parts (one per element of parts,
// each split into deltas) and that carries encrypted content.
func (w *wire) reasoning(id string, parts ...[]string) *wire {
	oi := w.out
	w.out++
	w.ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"reasoning","summary":[]}`, oi, id))
	var summary []string
	for si, deltas := range parts {
		w.ev("response.reasoning_summary_part.added", fmt.Sprintf(`"item_id":%q,"output_index":%d,"summary_index":%d,"part":{"type":"summary_text","text":""}`, id, oi, si))
		for _, d := range deltas {
			w.ev("response.reasoning_summary_text.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"summary_index":%d,"delta":%s`, id, oi, si, q(d)))
		}
		full := q(strings.Join(deltas, ""))
		w.ev("response.reasoning_summary_text.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"summary_index":%d,"text":%s`, id, oi, si, full))
		w.ev("response.reasoning_summary_part.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"summary_index":%d,"part":{"type":"summary_text","text":%s}`, id, oi, si, full))
		summary = append(summary, fmt.Sprintf(`{"type":"summary_text","text":%s}`, full))
	}
	return w.ev("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"reasoning","summary":[%s],"encrypted_content":"gAAAAABenc-%s"}`, oi, id, strings.Join(summary, ","), id))
}

// call sends a function_call item with arguments split into deltas; done=false stops after
// the deltas (a truncated call).
func (w *wire) call(id, callID, name string, done bool, deltas ...string) *wire {
	oi := w.out
	w.out++
	w.ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"function_call","status":"in_progress","arguments":"","call_id":%q,"name":%q}`, oi, id, callID, name))
	for _, d := range deltas {
		w.ev("response.function_call_arguments.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"delta":%s`, id, oi, q(d)))
	}
	if !done {
		return w
	}
	full := q(strings.Join(deltas, ""))
	w.ev("response.function_call_arguments.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"arguments":%s`, id, oi, full))
	return w.ev("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"function_call","status":"completed","arguments":%s,"call_id":%q,"name":%q}`, oi, id, full, callID, name))
}

func usageJSON(input, output, cached int) string {
	return fmt.Sprintf(`"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}`,
		input, cached, output, input+output)
}

func (w *wire) completed(input, output, cached int) string {
	w.ev("response.completed", `"response":{`+respHead+`,"status":"completed","output":[],`+usageJSON(input, output, cached)+`}`)
	return w.b.String()
}

func (w *wire) incomplete(reason string, input, output int) string {
	w.ev("response.incomplete", `"response":{`+respHead+`,"status":"incomplete","incomplete_details":{"reason":`+q(reason)+`},"output":[],`+usageJSON(input, output, 0)+`}`)
	return w.b.String()
}

func (w *wire) String() string { return w.b.String() }

func newWire() *wire { return (&wire{}).created() }

var textStream = newWire().text("msg_1", "Hello, ", "world!").completed(12, 5, 0)

const (
	rateLimitBody = `{"error":{"message":"Rate limit reached for gpt-test in organization org-123 on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	serverBody    = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	authBody      = `{"error":{"message":"Incorrect API key provided: sk-llmte****************6789. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
)

// responsesFixture returns the llmtest fixtures of the Responses wire.
func responsesFixture(name string) ([]llmtest.Response, bool) {
	one := func(body string) ([]llmtest.Response, bool) { return []llmtest.Response{{Body: body}}, true }
	switch name {
	case llmtest.CaseText:
		return one(textStream)
	case llmtest.CaseThinking:
		return one(newWire().reasoning("rs_1", []string{"Let me ", "think."}).text("msg_1", "Do", "ne.").completed(10, 30, 0))
	case llmtest.CaseToolCalls:
		return one(newWire().text("msg_1", "Look", "ing.").
			call("fc_1", "call_1", "read", true, `{"path":`, `"a.txt"}`).
			call("fc_2", "call_2", "bash", true, `{"command":`, `"ls -la"}`).completed(20, 30, 0))
	case llmtest.CaseSplitArgs:
		return one(newWire().call("fc_9", "call_9", "write", true,
			`{"pa`, `th":"dir/`, `file.go",`, `"content":`, `"package `, `main\n"}`).completed(20, 30, 0))
	case llmtest.CaseUsage:
		return one(newWire().text("msg_1", "o", "k").completed(150, 20, 50))
	case llmtest.CaseNoUsage:
		w := newWire().text("msg_1", "o", "k")
		w.ev("response.completed", `"response":{`+respHead+`,"status":"completed","output":[]}`)
		return one(w.String())
	case llmtest.CaseLength:
		return one(newWire().text("msg_1", "Writ", "ing.").
			call("fc_3", "call_3", "write", false, `{"path":"a.txt",`, `"content":"abc`).incomplete("max_output_tokens", 20, 1024))
	case llmtest.CaseInvalidArgs:
		return one(newWire().call("fc_4", "call_4", "read", true, `{"path":"a.txt",}`).completed(20, 10, 0))
	case llmtest.CaseRateLimit:
		return []llmtest.Response{
			{Status: 429, Header: http.Header{"Retry-After": {"2"}}, Body: rateLimitBody},
			{Body: textStream},
		}, true
	case llmtest.CaseServerError:
		return []llmtest.Response{{Status: 500, Body: serverBody}, {Body: textStream}}, true
	case llmtest.CaseOverloaded:
		w := newWire().textPartial("msg_1", "Hel")
		w.ev("error", `"code":"server_is_overloaded","message":"Our servers are currently overloaded. Please try again later.","param":null`)
		return []llmtest.Response{{Body: w.String()}, {Body: textStream}}, true
	case llmtest.CaseCut:
		i := strings.Index(textStream, "response.output_text.delta")
		return []llmtest.Response{{Body: textStream, CutAfter: i + 200}, {Body: textStream}}, true
	case llmtest.CaseCutMidEvent:
		i := strings.Index(textStream, "response.output_text.delta")
		i += strings.Index(textStream[i:], "\n\n") + 2 // the first delta, whole
		i += strings.Index(textStream[i:], "data:") + 20
		return []llmtest.Response{{Body: textStream[:i]}, {Body: textStream}}, true
	case llmtest.CaseNoTerminal:
		return []llmtest.Response{{Body: newWire().textPartial("msg_1", "Hel").String()}, {Body: textStream}}, true
	case llmtest.CaseIdle:
		return []llmtest.Response{{Body: newWire().textPartial("msg_1", "Hel").String(), Hang: true}, {Body: textStream}}, true
	case llmtest.CaseNoHeaders:
		return []llmtest.Response{{Stall: true}, {Body: textStream}}, true
	case llmtest.CaseAuth:
		return []llmtest.Response{{Status: 401, Body: authBody}}, true
	case llmtest.CaseHang:
		return []llmtest.Response{{Body: newWire().textPartial("msg_1", "Hel").String(), Hang: true}}, true
	}
	return nil, false
}

// checkResponsesRequest asserts that llmtest.Request() went out as a Responses API request.
func checkResponsesRequest(t *testing.T, r *http.Request, body []byte) {
	t.Helper()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		t.Errorf("request %s %s, want POST .../responses", r.Method, r.URL.Path)
	}
	if got, want := r.Header.Get("Authorization"), "Bearer "+llmtest.APIKey; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	schema := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`
	want := map[string]string{
		"model":             `"gpt-test"`,
		"stream":            `true`,
		"store":             `false`,
		"instructions":      `"You are a test."`,
		"max_output_tokens": `1024`,
		"input": `[
			{"role":"user","content":"List the files."},
			{"role":"assistant","content":"Checking."},
			{"type":"function_call","call_id":"call_0","name":"ls","arguments":"{\"path\":\".\"}"},
			{"type":"function_call_output","call_id":"call_0","output":"a.txt\nb.txt"},
			{"role":"user","content":"Now read a.txt."}]`,
		"tools": `[
			{"type":"function","name":"read","description":"Read a file.","parameters":` + schema + `,"strict":false},
			{"type":"function","name":"ls","description":"List a directory.","parameters":` + schema + `,"strict":false}]`,
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
	for _, k := range []string{"reasoning", "include", "previous_response_id"} {
		if _, ok := got[k]; ok {
			t.Errorf("request has %s; want none without thinking", k)
		}
	}
}
