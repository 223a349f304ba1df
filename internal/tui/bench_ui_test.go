package tui

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/wire"
)

// BenchmarkFirstFrame is the start of the UI: the model built on a real runtime (the
// composition root on the script model, a new session on disk) up to its first View.
func BenchmarkFirstFrame(b *testing.B) {
	h := newScriptHost(b, "version: 1\nturns:\n  - text: ok\n", "")
	for b.Loop() {
		m, err := New(context.Background(), h, Options{Width: 80, Height: 24})
		if err != nil {
			b.Fatal(err)
		}
		_ = m.View()
		b.StopTimer()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkKeystrokeWhileStreaming is one key press typed while an answer streams (2,000
// tokens in so far): its Update and the View that shows it.
func BenchmarkKeystrokeWhileStreaming(b *testing.B) {
	m := benchModel()
	m.event(wire.Event{Type: "message_start", Message: &wire.Message{Role: "assistant"}})
	m.event(wire.Event{Type: "message_update", Delta: &wire.Delta{Kind: "text_start"}})
	for i := range 2000 {
		text := "word "
		if i%60 == 59 {
			text = "end.\n"
		}
		m.event(wire.Event{Type: "message_update", Delta: &wire.Delta{Kind: "text_delta", Text: text}})
	}
	key := tea.KeyPressMsg{Code: 'x', Text: "x"}
	b.ReportAllocs()
	for b.Loop() {
		m.Update(key)
		_ = m.View()
		if len(m.input.Value()) > 200 {
			m.input.Reset()
		}
	}
}

// BenchmarkResume opens a recorded session of n messages with /resume ID (the runtime
// opened, the transcript rebuilt, a frame drawn) and reports the heap it holds afterwards,
// after a collection, in bytes and per message: flat per message means memory grows with
// the session and nothing more.
func BenchmarkResume(b *testing.B) {
	for _, n := range []int{100, 500} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			h := newScriptHost(b, toolTurns((n-2)/2), "")
			id := recordSession(b, h)
			var heap uint64
			for b.Loop() {
				m, err := New(context.Background(), h, Options{Width: 80, Height: 24})
				if err != nil {
					b.Fatal(err)
				}
				before := heapInUse()
				m.Update(m.cmdResume(id)())
				_ = m.View()
				if got := len(m.e.runtime().Context()); got != n {
					b.Fatalf("resumed %d messages, want %d", got, n)
				}
				heap = heapInUse() - min(before, heapInUse())
				runtime.KeepAlive(m)
				b.StopTimer()
				_ = m.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(heap), "heap-B")
			b.ReportMetric(float64(heap)/float64(n), "heap-B/msg")
		})
	}
}

// toolTurns is a scenario of calls turns, each one ls call, then a final answer: one prompt
// records 2+2·calls messages.
func toolTurns(calls int) string {
	var s strings.Builder
	s.WriteString("version: 1\nturns:\n")
	for i := range calls {
		fmt.Fprintf(&s, "  - text: Looking again, step %d of the survey of this directory.\n    calls: [{name: ls, id: l%d, args: {path: .}}]\n", i, i)
	}
	s.WriteString("  - text: Done looking.\n")
	return s.String()
}

// recordSession runs one prompt on h's scenario in a new session and returns its id.
func recordSession(b *testing.B, h *scriptHost) string {
	b.Helper()
	rt, err := system.Open(context.Background(), system.Options{
		Provider: llm.ProviderScript, Script: h.script, Dir: h.dir, Home: h.home,
		Getenv: func(string) string { return "" }, Session: system.SessionChoice{Mode: system.SessionNew},
	})
	if err != nil {
		b.Fatal(err)
	}
	prompt := llm.UserText("survey")
	run, err := rt.Begin(&prompt)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := run(context.Background()); err != nil {
		b.Fatal(err)
	}
	id := rt.Session.ID()
	if err := rt.Close(); err != nil {
		b.Fatal(err)
	}
	return id
}

func heapInUse() uint64 {
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}
