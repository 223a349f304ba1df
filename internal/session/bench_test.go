package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

type noop struct{}

func (noop) Spec() tool.Spec {
	return tool.Spec{Name: "noop", Description: "does nothing", Replay: tool.ReplaySafe,
		Schema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`)}
}

func (noop) Run(context.Context, tool.Call) (tool.Result, error) { return tool.TextResult("ok"), nil }

func loopScenario(turns int) string {
	var sb strings.Builder
	sb.WriteString("version: 1\nturns:\n")
	for i := range turns - 1 {
		fmt.Fprintf(&sb, "  - {text: step %d, calls: [{name: noop, args: {n: %d}}], usage: {input: 100, output: 10}}\n", i, i)
	}
	sb.WriteString("  - {text: done}\n")
	return sb.String()
}

// benchTurns runs a 20-turn task with one no-op tool call per turn and reports ns/turn, with
// the given recorder factory.
func benchTurns(b *testing.B, newRec func(b *testing.B) (kernel.Recorder, func())) {
	const turns = 20
	model, err := script.Parse([]byte(loopScenario(turns)), "loop.yaml")
	if err != nil {
		b.Fatal(err)
	}
	set, _ := tool.New(noop{})
	b.ReportAllocs()
	for b.Loop() {
		rec, done := newRec(b)
		a, _ := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: rec})
		if out, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil || out.Turns != turns {
			b.Fatalf("run: %v", err)
		}
		done()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
}

// BenchmarkTurnDurable measures a kernel turn with the durable session recorder (every intent
// and result fsynced), against BenchmarkTurnMemory with the in-memory recorder.
func BenchmarkTurnDurable(b *testing.B) {
	base := b.TempDir()
	n := 0
	benchTurns(b, func(b *testing.B) (kernel.Recorder, func()) {
		n++
		s, err := session.Create(filepath.Join(base, fmt.Sprint(n)), session.Meta{ID: fmt.Sprint("s", n)}, session.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s, func() { s.Close() }
	})
}

// BenchmarkTurnChecked is BenchmarkTurnDurable on an in-memory filesystem: without the fsyncs
// it measures what a session adds per turn in CPU (building, checking and reducing records).
func BenchmarkTurnChecked(b *testing.B) {
	fsys := ledgertest.NewMemFS()
	n := 0
	benchTurns(b, func(b *testing.B) (kernel.Recorder, func()) {
		n++
		s, err := session.Create(fmt.Sprintf("/sessions/%d", n), session.Meta{ID: fmt.Sprint("s", n)},
			session.Options{Ledger: ledger.Options{FS: fsys}})
		if err != nil {
			b.Fatal(err)
		}
		return s, func() { s.Close() }
	})
}

func BenchmarkTurnMemory(b *testing.B) {
	benchTurns(b, func(*testing.B) (kernel.Recorder, func()) { return &kernel.Memory{}, func() {} })
}

// BenchmarkResume10kTurns opens (verifies and reduces) a session of 10,000 turns and builds
// the context a resumed run sends.
func BenchmarkResume10kTurns(b *testing.B) {
	turns := resumeTurns
	if testing.Short() && os.Getenv("REIN_BENCH_TURNS") == "" {
		turns = 200 // CI runs every benchmark once with -short: building 10,000 fsynced turns takes minutes
	}
	dir := filepath.Join(b.TempDir(), "big")
	s, err := session.Create(dir, session.Meta{ID: "big"}, session.Options{})
	if err != nil {
		b.Fatal(err)
	}
	model, err := script.Parse([]byte(loopScenario(turns)), "loop.yaml")
	if err != nil {
		b.Fatal(err)
	}
	set, _ := tool.New(noop{})
	// Building the fixture takes a while (every record is fsynced); only reading it is measured.
	a, _ := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: s})
	if out, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil || out.Turns != turns {
		b.Fatalf("fixture: %v", err)
	}
	s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, _, err := session.Open(dir, session.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if msgs := s.Context(); len(msgs) != 2*turns {
			b.Fatalf("context has %d messages", len(msgs))
		}
		s.Close()
	}
}

// resumeTurns is the size of BenchmarkResume10kTurns' session.
var resumeTurns = 10_000

func init() {
	if n := os.Getenv("REIN_BENCH_TURNS"); n != "" {
		resumeTurns, _ = strconv.Atoi(n)
	}
}
