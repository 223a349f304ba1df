package llm_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/jsonenc/jsonenctest"
	"github.com/reinhq/rein/internal/llm"
)

func noErr(f func([]byte) []byte) ([]byte, error) { return f(nil), nil }

// Every encoder against json.Marshal, over values whose every exported field is filled.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	t.Run("Message", func(t *testing.T) {
		jsonenctest.Check(t, 5000, 1, func(m *llm.Message) ([]byte, error) { return m.AppendJSON(nil) })
	})
	t.Run("Part", func(t *testing.T) {
		jsonenctest.Check(t, 3000, 2, func(p *llm.Part) ([]byte, error) { return noErr(p.AppendJSON) })
	})
	t.Run("ToolCall", func(t *testing.T) {
		jsonenctest.Check(t, 2000, 3, func(c *llm.ToolCall) ([]byte, error) { return noErr(c.AppendJSON) })
	})
	t.Run("Usage", func(t *testing.T) {
		jsonenctest.Check(t, 3000, 4, func(u *llm.Usage) ([]byte, error) { return u.AppendJSON(nil) })
	})
	t.Run("Error", func(t *testing.T) {
		jsonenctest.Check(t, 2000, 5, func(e *llm.Error) ([]byte, error) { return noErr(e.AppendJSON) })
	})
}

func TestMessageAppendJSONRefusesWhatMarshalRefuses(t *testing.T) {
	for want, m := range map[string]llm.Message{
		"llm: message details: jsonenc: raw JSON of 5 bytes is not valid JSON": {Role: llm.RoleTool, Details: json.RawMessage(`{"a":`)},
		"llm: usage cost: jsonenc: unsupported value: float64 NaN":             {Role: llm.RoleAssistant, Usage: &llm.Usage{Cost: llm.Cost{Total: math.NaN()}}},
		"llm: usage cost: jsonenc: unsupported value: float64 +Inf":            {Role: llm.RoleAssistant, Usage: &llm.Usage{Cost: llm.Cost{Output: math.Inf(1)}}},
	} {
		if _, err := json.Marshal(&m); err == nil {
			t.Errorf("json.Marshal succeeded where AppendJSON must fail with %q", want)
		}
		if _, err := m.AppendJSON(nil); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("AppendJSON: %v, want %q", err, want)
		}
	}
}

func TestMessageAppendJSONAppends(t *testing.T) {
	m := llm.UserText("hi")
	got, err := m.AppendJSON([]byte("prefix:"))
	want, _ := json.Marshal(&m)
	if err != nil || !bytes.Equal(got, append([]byte("prefix:"), want...)) {
		t.Fatalf("AppendJSON onto a prefix = %s (%v), want prefix:%s", got, err, want)
	}
}

func entryMessage() *llm.Message {
	return &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("let me see"), llm.Text("I'll read <main.go> & fix it."),
		llm.Call("call_1", "read", `{"path":"main.go"}`)}, Provider: "anthropic", API: "anthropic-messages", Model: "claude",
		Usage:      &llm.Usage{Input: 1200, Output: 80, CacheRead: 4000, Cost: llm.Cost{Input: 0.0036, Output: 0.0012, CacheRead: 0.0012, Total: 0.006}},
		StopReason: llm.StopToolUse, Time: 1796164039054}
}

func BenchmarkEncodeMessage(b *testing.B) {
	m := entryMessage()
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = m.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
