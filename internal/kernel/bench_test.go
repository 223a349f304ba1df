package kernel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tool/shell"
)

// noop is a tool that does nothing, to measure the kernel's own cost per turn.
type noop struct{}

func (noop) Spec() tool.Spec {
	return tool.Spec{Name: "noop", Description: "does nothing", Schema: probeSchema, Replay: tool.ReplaySafe}
}

func (noop) Run(context.Context, tool.Call) (tool.Result, error) { return tool.TextResult("ok"), nil }

// BenchmarkTurnOverhead measures one agent turn (model call on the script model, one validated
// no-op tool call, recording, events) and reports ns/turn.
func BenchmarkTurnOverhead(b *testing.B) {
	const turns = 20
	var sb strings.Builder
	sb.WriteString("version: 1\nturns:\n")
	for i := range turns - 1 {
		fmt.Fprintf(&sb, "  - {text: step %d, calls: [{name: noop, args: {n: %d}}], usage: {input: 100, output: 10}}\n", i, i)
	}
	sb.WriteString("  - {text: done}\n")
	model := scenario(b, sb.String())
	set, _ := tool.New(noop{})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: &kernel.Memory{}})
		if err != nil {
			b.Fatal(err)
		}
		out, err := a.Run(context.Background(), nil, llm.UserText("go"))
		if err != nil || out.Turns != turns {
			b.Fatalf("run: %v (%d turns)", err, out.Turns)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
}

// BenchmarkFourTurnTask runs a real four-turn task — write a file, read it, run a command, answer
// — on the script model with the real file and shell tools in a temporary workspace.
func BenchmarkFourTurnTask(b *testing.B) {
	model := scenario(b, `
version: 1
turns:
  - {calls: [{name: write, args: {path: notes.txt, content: "one\ntwo\nthree\n"}}], usage: {input: 500, output: 40}}
  - {calls: [{name: read, args: {path: notes.txt}}], usage: {input: 600, output: 20}}
  - {calls: [{name: bash, args: {command: "wc -l < notes.txt"}}], usage: {input: 700, output: 20}}
  - {text: notes.txt has three lines., usage: {input: 800, output: 10}}
`)
	ws, err := tool.OpenWorkspace(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	set, err := tool.New(append(fstool.All(ws), shell.New(ws.Dir, shell.Options{}))...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: &kernel.Memory{}})
		if err != nil {
			b.Fatal(err)
		}
		out, err := a.Run(context.Background(), nil, llm.UserText("go"))
		if err != nil || out.Turns != 4 {
			b.Fatalf("run: %v (%d turns)", err, out.Turns)
		}
	}
}
