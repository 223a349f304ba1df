package openaicompat_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// wireStream streams one request against a server answering with body, written in pieces of
// at most 7 bytes, each flushed (so that events are split across reads).
func wireStream(t *testing.T, body string) *llm.Message {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for len(body) > 0 {
			n := min(7, len(body))
			if len(body) > 1<<16 {
				n = 1 << 16 // the oversize line: not byte by byte
			}
			_, _ = io.WriteString(w, body[:n])
			w.(http.Flusher).Flush()
			body = body[n:]
		}
	}))
	defer srv.Close()
	m, err := openaicompat.New(openaicompat.Config{Model: "m", BaseURL: srv.URL, APIKey: "sk-wire-secret"})
	if err != nil {
		t.Fatal(err)
	}
	return m.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}, func(llm.Event) {})
}

// TestStreamWireEdges checks the event-stream framing the adapter copes with, end to end.
func TestStreamWireEdges(t *testing.T) {
	crlf := strings.ReplaceAll(ct.Content("hel")+ct.Content("lo")+ct.Finish("stop")+ct.Done, "\n", "\r\n")
	for _, tc := range []struct {
		name, body string
		text       string        // the answer, for a success
		kind       llm.ErrorKind // the failure, otherwise
	}{
		{"split across reads", ct.Content("hel") + ct.Content("lo") + ct.Finish("stop") + ct.Done, "hello", ""},
		{"crlf", crlf, "hello", ""},
		{"comments", ": OPENROUTER PROCESSING\n\n" + ct.Content("hel") + ": ping\n\n" + ct.Content("lo") + ct.Finish("stop") + ct.Done, "hello", ""},
		{"[DONE] without its newline", ct.Content("hello") + "data: [DONE]", "hello", ""},
		{"last chunk without its newline", ct.Content("hello") + strings.TrimSuffix(ct.Finish("stop"), "\n\n"), "", llm.KindIncompleteStream},
		{"error chunk mid-stream", ct.Content("hel") + `data: {"error":{"message":"overloaded sk-wire-secret","type":"server_error","code":"server_is_overloaded"}}` + "\n\n", "", llm.KindOverloaded},
		{"malformed chunk", ct.Content("hel") + "data: {\"choices\":[\n\n", "", llm.KindProtocol},
		{"oversize line", "data: \"" + strings.Repeat("x", 32<<20) + "\"\n\n", "", llm.KindProtocol},
	} {
		msg := wireStream(t, tc.body)
		if tc.kind == "" {
			if msg.Err != nil || msg.StopReason != llm.StopEnd || msg.Text() != tc.text {
				t.Errorf("%s: stop %s, text %q, err %v; want %q", tc.name, msg.StopReason, msg.Text(), msg.Err, tc.text)
			}
			continue
		}
		if msg.Err == nil || msg.Err.Kind != tc.kind {
			t.Errorf("%s: err %+v, want kind %s", tc.name, msg.Err, tc.kind)
		} else if strings.Contains(msg.Err.Message, "sk-wire-secret") {
			t.Errorf("%s: the message leaks the key: %s", tc.name, msg.Err.Message)
		}
	}
}
