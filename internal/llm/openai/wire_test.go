package openai_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/llmtest"
)

// TestResponsesWireEdges checks the event-stream framing the Responses adapter copes with.
func TestResponsesWireEdges(t *testing.T) {
	good := newWire().text("msg_1", "Hel", "lo").completed(3, 2, 0)
	if !strings.Contains(good, `"type":"response.completed",`) {
		t.Fatal("the fixture's completed event changed shape; adjust the test")
	}
	completed := good[strings.LastIndex(strings.TrimSuffix(good, "\n\n"), "\n\n")+2:]
	for _, tc := range []struct {
		name, body string
		kind       llm.ErrorKind // "" for an answer "Hello"
	}{
		{"plain", good, ""},
		{"crlf", strings.ReplaceAll(good, "\n", "\r\n"), ""},
		{"keep-alive comments", ": keep-alive\n\n" + strings.ReplaceAll(good, "\n\n", "\n\n: ping\n\n"), ""},
		{"type from the event name", strings.Replace(good, `"type":"response.completed",`, "", 1), ""},
		{"terminal event cut at EOF", strings.TrimSuffix(good, "\n\n"), llm.KindIncompleteStream},
		{"terminal event half sent", strings.TrimSuffix(good, completed) + completed[:len(completed)/2], llm.KindIncompleteStream},
		{"malformed event", newWire().String() + "event: response.output_text.delta\ndata: {\"type\":\n\n", llm.KindProtocol},
		{"[DONE] before completion", newWire().text("msg_1", "Hello").String() + "data: [DONE]\n\n", llm.KindIncompleteStream},
	} {
		msg, _ := stream(t, tc.body, llmtest.Request())
		if tc.kind == "" {
			if msg.Err != nil || msg.StopReason != llm.StopEnd || msg.Text() != "Hello" {
				t.Errorf("%s: stop %s, text %q, err %v", tc.name, msg.StopReason, msg.Text(), msg.Err)
			}
			continue
		}
		if msg.Err == nil || msg.Err.Kind != tc.kind {
			t.Errorf("%s: err %+v, want kind %s", tc.name, msg.Err, tc.kind)
		}
	}
}
