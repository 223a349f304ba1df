package telemetry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/telemetry"
)

// discard is an exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []*telemetry.SpanRecord) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkTurn measures one agent turn (a script-model request, one validated tool call,
// in-memory recording, events) with tracing off and on (every span built and handed to an
// exporter that drops it), and reports ns/turn and spans/turn.
func BenchmarkTurn(b *testing.B) {
	const turns = 20
	var sb strings.Builder
	sb.WriteString("version: 1\nturns:\n")
	for i := range turns - 1 {
		fmt.Fprintf(&sb, "  - {text: step %d, calls: [{name: echo, args: {n: %d}}], usage: {input: 100, output: 10}}\n", i, i)
	}
	sb.WriteString("  - {text: done}\n")
	scenario := sb.String()
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var tr *telemetry.Tracer
			if on {
				var err error
				if tr, err = telemetry.New(context.Background(), telemetry.Config{Export: discard{}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if out := run(b, tr, scenario, kernel.Config{}, nil); out.Turns != turns {
					b.Fatalf("%d turns", out.Turns)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
		})
	}
}
