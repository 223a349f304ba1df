package mock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/bench/mock"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/llm/openai"
	"github.com/reinhq/rein/internal/llm/openaicompat"
)

const script = `{"turns": [
  {"text": "writing it now", "calls": [{"name": "write", "args": {"path": "notes.txt", "content": "one\ntwo\n"}}]},
  {"calls": [{"name": "read", "args": {"path": "data-{{i}}.txt", "turn": "{{n}}"}}], "repeat": 2, "expect": "MARK-{{i}}"},
  {"text": "all done."}
]}`

func parse(t *testing.T) *mock.Script {
	t.Helper()
	s, err := mock.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseScriptExpands(t *testing.T) {
	s := parse(t)
	if len(s.Turns) != 4 {
		t.Fatalf("%d turns, want 4", len(s.Turns))
	}
	if got := string(s.Turns[2].Calls[0].Args); got != `{"path": "data-2.txt", "turn": "3"}` {
		t.Errorf("turn 3 args = %s", got)
	}
	if s.Turns[2].Expect != "MARK-2" {
		t.Errorf("turn 3 expect = %q", s.Turns[2].Expect)
	}
	for _, bad := range []string{`{"turns": []}`, `{"turns": [{}]}`, `{"turns": [{"calls": [{"name": "x", "args": [1]}]}]}`, `{"turn": []}`} {
		if _, err := mock.ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) succeeded", bad)
		}
	}
}

// play runs the script through one of rein's adapters and checks every turn arrives whole.
func play(t *testing.T, m func(url string) llm.Model, opts mock.Options) []mock.Entry {
	t.Helper()
	var log bytes.Buffer
	opts.Log = &log
	srv := httptest.NewServer(mock.New(parse(t), opts))
	defer srv.Close()
	model := m(srv.URL)
	req := &llm.Request{System: "you are a test", Tools: []llm.ToolSpec{{Name: "read", Description: "reads",
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []llm.Message{llm.UserText("go")}}
	for k, want := range []string{"write", "read", "read", ""} {
		msg := model.Stream(context.Background(), req, func(llm.Event) {})
		if msg.StopReason == llm.StopError {
			t.Fatalf("turn %d: %v", k+1, msg.Err)
		}
		calls := msg.ToolCalls()
		if want == "" {
			if len(calls) != 0 || msg.Text() != "all done." || msg.StopReason != llm.StopEnd {
				t.Fatalf("turn %d: %q %v %v", k+1, msg.Text(), calls, msg.StopReason)
			}
			break
		}
		if len(calls) != 1 || calls[0].Name != want || msg.StopReason != llm.StopToolUse {
			t.Fatalf("turn %d: calls %v, stop %v", k+1, calls, msg.StopReason)
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(calls[0].Arguments), &args); err != nil {
			t.Fatalf("turn %d: arguments %q: %v", k+1, calls[0].Arguments, err)
		}
		if k == 0 && (args["content"] != "one\ntwo\n" || msg.Text() != "writing it now") {
			t.Fatalf("turn 1: %q, args %v", msg.Text(), args)
		}
		if msg.Usage == nil || msg.Usage.Input == 0 {
			t.Errorf("turn %d: no usage", k+1)
		}
		result := "nothing"
		if k == 1 {
			result = "MARK-1" // the second read's expect is not met on purpose
		}
		req.Messages = append(req.Messages, *msg, llm.Message{Role: llm.RoleTool, ToolCallID: calls[0].ID,
			ToolName: calls[0].Name, Content: []llm.Part{llm.Text(result)}})
	}
	srv.Close() // waits for the handlers, which log after the response
	var entries []mock.Entry
	dec := json.NewDecoder(&log)
	for dec.More() {
		var e mock.Entry
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	// A handler logs after its last write, so a client may already have sent the next request:
	// lines can come out of order.
	slices.SortFunc(entries, func(a, b mock.Entry) int { return a.N - b.N })
	if len(entries) != 4 {
		t.Fatalf("%d log entries, want 4", len(entries))
	}
	for i, e := range entries {
		if e.N != i+1 || e.Turn != i+1 || !e.Stream || e.Tools != 1 || e.SystemBytes != len("you are a test") ||
			e.Bytes == 0 || e.RecvNS == 0 || e.DoneNS < e.BodyNS || e.BodyNS < e.RecvNS {
			t.Errorf("entry %d: %+v", i+1, e)
		}
	}
	if entries[1].ExpectOK != nil {
		t.Errorf("entry 2 checks an expect the first turn does not have")
	}
	if ok := entries[2].ExpectOK; ok == nil || !*ok {
		t.Errorf("entry 3: expect MARK-1 not seen: %v", ok)
	}
	if ok := entries[3].ExpectOK; ok == nil || *ok {
		t.Errorf("entry 4: expect MARK-2 reported seen: %v", ok)
	}
	return entries
}

func TestOpenAIChatStream(t *testing.T) {
	entries := play(t, func(url string) llm.Model {
		m, err := openaicompat.New(openaicompat.Config{Model: "mock", BaseURL: url + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}, mock.Options{})
	if entries[0].API != "openai" || entries[0].Messages != 2 {
		t.Errorf("first entry: %+v", entries[0]) // system + user
	}
}

// TestResponsesStream plays the script to rein's own Responses API client (the wire Codex
// speaks): text deltas, function calls with their call ids, usage, the stop reason.
func TestResponsesStream(t *testing.T) {
	entries := play(t, func(url string) llm.Model {
		m, err := openai.New(openai.Config{Model: "mock", BaseURL: url + "/v1", APIKey: "k", API: llm.APIOpenAIResponses})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}, mock.Options{})
	if entries[0].API != "responses" || entries[0].Path != "/v1/responses" || entries[0].Messages != 1 {
		t.Errorf("first entry: %+v", entries[0]) // the user message; the system prompt is the instructions
	}
	if entries[3].Messages != 8 { // user; the first turn's text, call and result; two (call, result) pairs
		t.Errorf("last entry: %d input items, want 8", entries[3].Messages)
	}
}

func TestAnthropicStream(t *testing.T) {
	entries := play(t, func(url string) llm.Model {
		return anthropic.New(anthropic.Config{Model: "mock", BaseURL: url, APIKey: "k"})
	}, mock.Options{})
	if entries[0].API != "anthropic" || entries[0].Messages != 1 {
		t.Errorf("first entry: %+v", entries[0])
	}
}

func TestDelays(t *testing.T) {
	entries := play(t, func(url string) llm.Model {
		m, _ := openaicompat.New(openaicompat.Config{Model: "mock", BaseURL: url + "/v1"})
		return m
	}, mock.Options{TTFT: 20 * time.Millisecond, TokenDelay: time.Millisecond})
	// The first turn streams 3 text tokens and a few argument chunks after the TTFT.
	if d := time.Duration(entries[0].DoneNS - entries[0].BodyNS); d < 25*time.Millisecond {
		t.Errorf("first response took %v, want ≥ TTFT + token delays", d)
	}
}

func TestExhaustedAndBadRequests(t *testing.T) {
	var log bytes.Buffer
	s, _ := mock.ParseScript([]byte(`{"turns": [{"text": "only"}]}`))
	srv := httptest.NewServer(mock.New(s, mock.Options{Log: &log}))
	defer srv.Close()
	m, _ := openaicompat.New(openaicompat.Config{Model: "mock", BaseURL: srv.URL})
	req := &llm.Request{Messages: []llm.Message{llm.UserText("go")}}
	for _, want := range []string{"only", "script exhausted"} {
		if got := m.Stream(context.Background(), req, func(llm.Event) {}).Text(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	srv.Close()
	rec := httptest.NewRecorder()
	mock.New(s, mock.Options{}).ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader("{")))
	if rec.Code != 400 {
		t.Errorf("bad body: status %d", rec.Code)
	}
	if !strings.Contains(log.String(), `"turn":0`) {
		t.Errorf("exhausted request not logged with turn 0: %s", log.String())
	}
}
