package session

import (
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/internal/jsonenc/jsonenctest"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// appendOf adapts a body's AppendJSON to jsonenctest.Check.
func appendOf[T interface{ AppendJSON([]byte) ([]byte, error) }](v *T) ([]byte, error) {
	return (*v).AppendJSON(nil)
}

// Every record body's encoder against json.Marshal, over bodies whose every exported field
// (the message's and usage's included) is filled.
func TestRecordBodiesAppendJSONMatchesMarshal(t *testing.T) {
	t.Run("entry", func(t *testing.T) { jsonenctest.Check(t, 4000, 11, appendOf[entryBody]) })
	t.Run("intent", func(t *testing.T) { jsonenctest.Check(t, 4000, 12, appendOf[intentBody]) })
	t.Run("attempt", func(t *testing.T) { jsonenctest.Check(t, 1000, 13, appendOf[attemptBody]) })
	t.Run("closed", func(t *testing.T) { jsonenctest.Check(t, 2000, 14, appendOf[closedBody]) })
	t.Run("cancel", func(t *testing.T) { jsonenctest.Check(t, 2000, 15, appendOf[cancelBody]) })
	t.Run("run", func(t *testing.T) { jsonenctest.Check(t, 1000, 16, appendOf[runBody]) })
	t.Run("fact", func(t *testing.T) { jsonenctest.Check(t, 2000, 17, appendOf[factBody]) })
	t.Run("lane", func(t *testing.T) { jsonenctest.Check(t, 1000, 18, appendOf[laneBody]) })
	t.Run("hook", func(t *testing.T) { jsonenctest.Check(t, 2000, 19, appendOf[HookRun]) })
}

func benchEntry() entryBody {
	return entryBody{Lane: MainLane, Intent: "01a233b8318f435675c890895593d761", Message: &llm.Message{
		Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("let me see"), llm.Text("I'll read <main.go> & fix it."),
			llm.Call("call_1", "read", `{"path":"main.go"}`)},
		Provider: "anthropic", API: "anthropic-messages", Model: "claude", StopReason: llm.StopToolUse, Time: 1796164039054,
		Usage: &llm.Usage{Input: 1200, Output: 80, CacheRead: 4000, Cost: llm.Cost{Input: 0.0036, Output: 0.0012, CacheRead: 0.0012, Total: 0.006}},
	}}
}

// BenchmarkEncodeEntry compares the warm cost of encoding an assistant entry; the first
// encode in a process, which AppendJSON exists to save, is not measurable by a benchmark
// (encoding/json's type cache is warm after the first iteration).
func BenchmarkEncodeEntry(b *testing.B) {
	e := benchEntry()
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte // reused, as the ledger reuses its encoding buffer
		for b.Loop() {
			var err error
			if buf, err = e.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	in := intentBody{Lane: MainLane, Kind: kernel.IntentModelCall, Turn: 3, Reserved: []string{"01a233b8318f89de6f493d1802a30dfa"},
		Attempt: 1, Retry: &RetryPolicy{MaxAttempts: 4}}
	b.Run("intent/json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("intent/AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = in.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
