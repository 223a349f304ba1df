package script

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/llm"
)

// recording is one streamed call.
type recording struct {
	msg    *llm.Message
	events []llm.Event
}

func record(ctx context.Context, m llm.Model, req *llm.Request) recording {
	var r recording
	r.msg = m.Stream(ctx, req, func(ev llm.Event) { r.events = append(r.events, ev) })
	return r
}

// checkStream checks the stream contract of package llm on one call: one start first, one
// done or error last carrying the returned message, well-formed blocks whose deltas add up to
// the message content, and a failure description on every failed message. llmtest keeps its
// own checks unexported (its suite drives HTTP adapters), so these are local.
func checkStream(t *testing.T, r recording) {
	t.Helper()
	m := r.msg
	if m == nil {
		t.Fatal("Stream returned nil")
	}
	if m.Role != llm.RoleAssistant || m.Provider != llm.ProviderScript || m.API != llm.APIScript || m.Model == "" {
		t.Errorf("message role/provider/api/model = %q/%q/%q/%q", m.Role, m.Provider, m.API, m.Model)
	}
	if m.Usage == nil {
		t.Errorf("message without usage")
	}
	if len(r.events) < 2 {
		t.Fatalf("events = %d, want at least start and a final event", len(r.events))
	}
	if r.events[0].Type != llm.EventStart {
		t.Errorf("first event = %s, want start", r.events[0].Type)
	}
	last := r.events[len(r.events)-1]
	if last.Type != llm.EventDone && last.Type != llm.EventError {
		t.Errorf("last event = %s, want done or error", last.Type)
	}
	if last.Message != m {
		t.Errorf("the final event does not carry the returned message")
	}
	if (last.Type == llm.EventError) != m.Failed() {
		t.Errorf("final event %s with stop reason %q", last.Type, m.StopReason)
	}
	if m.Failed() && (m.Err == nil || m.Err.Message == "") {
		t.Errorf("failed message without an error description: %+v", m.Err)
	}
	if !m.Failed() && m.Err != nil {
		t.Errorf("successful message with an error: %+v", m.Err)
	}

	// Blocks: start, deltas, end, for content indexes in order; deltas add up.
	got := map[int]string{}
	open := -1
	ended := map[int]bool{}
	var calls []*llm.ToolCall
	for i, ev := range r.events[1 : len(r.events)-1] {
		switch ev.Type {
		case llm.EventStart, llm.EventDone, llm.EventError:
			t.Errorf("event %d: %s in the middle of the stream", i+1, ev.Type)
		case llm.EventTextStart, llm.EventThinkingStart, llm.EventToolCallStart:
			if open >= 0 && !ended[open] && !m.Failed() {
				t.Errorf("event %d: block %d starts before block %d ended", i+1, ev.Index, open)
			}
			if ev.Index != open+1 {
				t.Errorf("event %d: block index %d, want %d", i+1, ev.Index, open+1)
			}
			open = ev.Index
			if ev.Type == llm.EventToolCallStart {
				if ev.Call == nil || ev.Call.ID == "" || ev.Call.Name == "" || ev.Call.Arguments != "" {
					t.Errorf("event %d: toolcall_start wants id and name only, got %+v", i+1, ev.Call)
				}
			}
		case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
			if ev.Index != open || ended[open] {
				t.Errorf("event %d: delta for block %d, open block is %d", i+1, ev.Index, open)
			}
			if ev.Delta == "" {
				t.Errorf("event %d: empty delta", i+1)
			}
			got[ev.Index] += ev.Delta
		case llm.EventTextEnd, llm.EventThinkingEnd, llm.EventToolCallEnd:
			if ev.Index != open || ended[open] {
				t.Errorf("event %d: end of block %d, open block is %d", i+1, ev.Index, open)
			}
			ended[open] = true
			if ev.Type == llm.EventToolCallEnd {
				calls = append(calls, ev.Call)
			}
		default:
			t.Errorf("event %d: unexpected %s", i+1, ev.Type)
		}
		if t.Failed() {
			return
		}
	}
	if open != len(m.Content)-1 {
		t.Errorf("%d blocks streamed, message has %d parts", open+1, len(m.Content))
	}
	for i, p := range m.Content {
		want := p.Text
		if p.Type == llm.PartToolCall {
			want = p.Call.Arguments
		}
		if got[i] != want {
			t.Errorf("part %d (%s): deltas add up to %q, message holds %q", i, p.Type, got[i], want)
		}
		if !m.Failed() && !ended[i] {
			t.Errorf("part %d (%s) never ended", i, p.Type)
		}
	}
	if !m.Failed() {
		mc := m.ToolCalls()
		if len(mc) != len(calls) {
			t.Fatalf("%d toolcall_end events, %d calls in the message", len(calls), len(mc))
		}
		for i := range mc {
			if calls[i] == nil || *calls[i] != *mc[i] {
				t.Errorf("toolcall_end %d carries %+v, message holds %+v", i, calls[i], mc[i])
			}
		}
	}
}

// TestExamplesKeepTheStreamContract streams every turn of every example scenario and checks
// the stream contract on each answer.
func TestExamplesKeepTheStreamContract(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			m, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, d := range m.sc.dialogs {
				prompt := promptFor(t, d)
				for step, tr := range d.turns {
					req := requestAt(prompt, step)
					attempts := 1 + tr.times // every failing attempt, then the answer
					for a := 0; a < attempts; a++ {
						r := record(context.Background(), m, req)
						checkStream(t, r)
						n++
						wantFail := tr.fail != nil && (tr.times == 0 || a < tr.times)
						if r.msg.Failed() != wantFail {
							t.Errorf("%s turn %d attempt %d: failed = %v (%+v), want %v", d.field, step, a, r.msg.Failed(), r.msg.Err, wantFail)
						}
					}
				}
			}
			if n == 0 {
				t.Error("streamed nothing")
			}
		})
	}
}

// promptFor returns a user message that d answers: the first of a few candidates its match
// accepts and no earlier dialog claims.
func promptFor(t *testing.T, d *dialog) string {
	t.Helper()
	if d.match == nil {
		return "anything else"
	}
	for _, p := range []string{"List the files.", "flaky please", "broken", "long write", "odd arguments"} {
		if d.match.MatchString(p) {
			return p
		}
	}
	t.Fatalf("no test prompt for %s", d.describe())
	return ""
}

// requestAt returns a request whose last user message is prompt, followed by step assistant
// messages (each with a tool call and its result).
func requestAt(prompt string, step int) *llm.Request {
	req := &llm.Request{Messages: []llm.Message{llm.UserText(prompt)}}
	for i := range step {
		call := &llm.ToolCall{ID: "c" + string(rune('a'+i)), Name: "ls", Arguments: `{}`}
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Part{{Type: llm.PartToolCall, Call: call}}},
			llm.ToolResultText(call, "ok", false))
	}
	return req
}
