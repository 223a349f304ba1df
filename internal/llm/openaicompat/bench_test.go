package openaicompat_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// readLoop is the request of turn turns+1 of a read loop: a user message, then turns
// assistant messages each with one tool call and its ~400-byte result.
func readLoop(turns int) *llm.Request {
	msgs := []llm.Message{llm.UserText("Work through the task step by step.")}
	body := strings.Repeat("// Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n", 6)
	for i := range turns {
		c := &llm.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "read", Arguments: fmt.Sprintf(`{"path":"data/file-%d.txt"}`, i)}
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: c}}, StopReason: llm.StopToolUse},
			llm.ToolResultText(c, fmt.Sprintf("File %d. MARKER-%d.\n%s", i, i, body), false))
	}
	schema := []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	return &llm.Request{System: strings.Repeat("You are a coding agent. ", 40), Messages: msgs,
		Tools: []llm.ToolSpec{{Name: "read", Description: "Reads a file.", Schema: schema}}}
}

// BenchmarkStream is one model request of a long read loop on a loopback server answering
// with a short tool-call stream: encoding the body (from the per-message cache), sending it,
// decoding the stream. The server reads the whole body. Each iteration is the next turn: the
// history grows by one round trip (an assistant call and its result), sent under one lineage
// (lineage=grows: the kernel's requests) or without (lineage=none: every message is compared).
// msgs-read/op is how many messages Heal's check and the cache's comparison read per request:
// the work that grows with the history, 4 per turn under a lineage.
func BenchmarkStream(b *testing.B) {
	answer := ct.CallStart(0, "call_x", "read") + ct.CallArgs(0, `{"path":"data/file-1.txt"}`) +
		ct.Finish("tool_calls") + ct.Usage(1000, 20, 0) + "data: [DONE]\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	verify := *openaicompat.VerifyVouched
	*openaicompat.VerifyVouched = false // the tests' check would read every message again
	defer func() { *openaicompat.VerifyVouched = verify }()
	for _, turns := range []int{50, 500} {
		for _, grows := range []bool{false, true} {
			name := fmt.Sprintf("turns=%d/lineage=none", turns)
			if grows {
				name = fmt.Sprintf("turns=%d/lineage=grows", turns)
			}
			b.Run(name, func(b *testing.B) {
				req := readLoop(turns)
				turn := req.Messages[len(req.Messages)-2 : len(req.Messages) : len(req.Messages)]
				if grows {
					req.Lineage = llm.NewLineage()
				}
				m, err := openaicompat.New(openaicompat.Config{Model: "m", BaseURL: srv.URL})
				if err != nil {
					b.Fatal(err)
				}
				if msg := m.Stream(context.Background(), req, func(llm.Event) {}); msg.StopReason != llm.StopToolUse {
					b.Fatalf("stop %q: %v", msg.StopReason, msg.Err)
				}
				read := openaicompat.MessagesRead(m)
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					req.Messages = append(req.Messages, turn...)
					msg := m.Stream(context.Background(), req, func(llm.Event) {})
					if msg.StopReason != llm.StopToolUse {
						b.Fatalf("stop %q: %v", msg.StopReason, msg.Err)
					}
					n++
				}
				b.ReportMetric(float64(openaicompat.MessagesRead(m)-read)/float64(n), "msgs-read/op")
			})
		}
	}
}
