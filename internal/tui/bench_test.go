package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/wire"
)

// BenchmarkStreamedAnswer streams an answer of n tokens (about 4 characters each, a
// newline every 60 tokens) through the transcript and draws an 80×24 frame after every
// delta, as the UI does. Time per token stays flat as n grows: streaming costs time linear
// in the answer's length. The final markdown rendering (once, at message_end) is measured
// with it.
func BenchmarkStreamedAnswer(b *testing.B) {
	for _, n := range []int{1000, 5000, 10000} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			m := benchModel()
			deltas := make([]wire.Event, n)
			for i := range deltas {
				text := "word "
				if i%60 == 59 {
					text = "end.\n"
				}
				deltas[i] = wire.Event{Type: "message_update", Delta: &wire.Delta{Kind: "text_delta", Text: text}}
			}
			b.ReportAllocs()
			for b.Loop() {
				m.t = newTranscript(m.width)
				m.event(wire.Event{Type: "message_start", Message: &wire.Message{Role: "assistant"}})
				m.event(wire.Event{Type: "message_update", Delta: &wire.Delta{Kind: "text_start"}})
				for _, d := range deltas {
					m.event(d)
					_ = m.frame()
				}
				m.event(wire.Event{Type: "message_end", Message: &wire.Message{Role: "assistant", Content: []wire.Part{{Type: "text", Text: strings.Repeat("word ", n)}}}})
				_ = m.frame()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
		})
	}
}

// BenchmarkStream is the wrapping alone: n deltas appended to one stream.
func BenchmarkStream(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			for b.Loop() {
				s := newStream(78)
				for i := range n {
					if i%60 == 59 {
						s.add("end.\n")
					} else {
						s.add("word ")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
		})
	}
}

// benchModel is a model with no runtime, at 80×24 without colour.
func benchModel() *Model {
	e := newEngine(nil)
	m := &Model{ctx: context.Background(), e: e, width: 80, height: 24, md: &markdown{}}
	m.st = newStyles(false, true)
	m.t = newTranscript(80)
	m.input = newInput(80, m.st)
	return m
}
