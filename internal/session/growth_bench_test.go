package session_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// growthModel answers every request with one call of the no-op tool (its result ~600 bytes,
// like a file read) until turns requests were made, then with "done"; it samples the bytes
// allocated so far and the clock at each request, and with live set the live heap (after a
// collection, once the clock is read) at requests 51 and turns.
type growthModel struct {
	turns int
	alloc []uint64
	at    []time.Time
	live  bool
	heap  [2]uint64 // live heap at requests 51 and turns
}

func (g *growthModel) Stream(_ context.Context, req *llm.Request, _ func(llm.Event)) *llm.Message {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g.alloc = append(g.alloc, ms.TotalAlloc)
	g.at = append(g.at, time.Now())
	n := len(g.alloc)
	if g.live && (n == 51 || n == g.turns) {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		g.heap[min(n/g.turns, 1)] = ms.HeapAlloc
	}
	if n >= g.turns {
		return &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: "done"}}, StopReason: llm.StopEnd}
	}
	call := &llm.ToolCall{ID: fmt.Sprintf("call_%d", n), Name: "pad", Arguments: `{"n":1}`}
	return &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: call}}, StopReason: llm.StopToolUse}
}

type pad struct{}

func (pad) Spec() tool.Spec {
	return tool.Spec{Name: "pad", Description: "returns a file's worth of text", Replay: tool.ReplaySafe,
		Schema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`)}
}

var padText = strings.Repeat("package data\n\n// Lorem ipsum dolor sit amet, consectetur.\n", 12)

func (pad) Run(context.Context, tool.Call) (tool.Result, error) { return tool.TextResult(padText), nil }

// BenchmarkTurnGrowth runs a 500-turn loop through the kernel and reports the bytes allocated
// and the time per turn at turns 1–50 and 451–500 (what a turn leaves to the GC, and how that grows with
// the history), and the live heap at turns 51 and 500 with what each turn adds to it (what
// every collection has to mark), with the in-memory recorder and with a durable session (the
// real filesystem: the in-memory one copies the file at every fsync).
func BenchmarkTurnGrowth(b *testing.B) {
	const turns = 500
	for _, rec := range []string{"memory", "session"} {
		b.Run("recorder="+rec, func(b *testing.B) {
			set, _ := tool.New(pad{})
			base := b.TempDir()
			var early, late, earlyNs, lateNs, live50, live500 float64
			n := 0
			for b.Loop() {
				n++
				var r kernel.Recorder = &kernel.Memory{}
				var s *session.Session
				if rec == "session" {
					var err error
					s, err = session.Create(filepath.Join(base, fmt.Sprint(n)), session.Meta{ID: fmt.Sprint("s", n)}, session.Options{})
					if err != nil {
						b.Fatal(err)
					}
					r = s
				}
				m := &growthModel{turns: turns, live: true}
				a, _ := kernel.New(kernel.Config{Model: m, Tools: set, Recorder: r})
				if out, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil || out.Turns != turns {
					b.Fatalf("run: %v", err)
				}
				if s != nil {
					s.Close()
				}
				early += float64(m.alloc[50]-m.alloc[0]) / 50
				late += float64(m.alloc[turns-1]-m.alloc[turns-51]) / 50
				earlyNs += float64(m.at[50].Sub(m.at[0]).Nanoseconds()) / 50
				lateNs += float64(m.at[turns-1].Sub(m.at[turns-51]).Nanoseconds()) / 50
				live50 += float64(m.heap[0])
				live500 += float64(m.heap[1])
			}
			b.ReportMetric(early/float64(n), "B/turn@1-50")
			b.ReportMetric(late/float64(n), "B/turn@451-500")
			b.ReportMetric(earlyNs/float64(n), "ns/turn@1-50")
			b.ReportMetric(lateNs/float64(n), "ns/turn@451-500")
			b.ReportMetric(live50/float64(n)/1024, "liveKB@51")
			b.ReportMetric(live500/float64(n)/1024, "liveKB@500")
			b.ReportMetric((live500-live50)/float64(n)/float64(turns-51), "liveB/turn")
		})
	}
}

// TestTwoFsyncsPerToolTurn: a tool turn fsyncs the ledger twice — the tool's intent (the model's
// answer rides on it) and the next model call's intent (the tool's result rides on it) — and a
// run of n tool turns needs 2n+2 fsyncs of the ledger file in all (plus the final answer's and
// the run's end).
func TestTwoFsyncsPerToolTurn(t *testing.T) {
	const turns = 20
	syncs := 0
	fsys := &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(op ledgertest.Op) *ledgertest.Fault {
		if op.Kind == "sync" && filepath.Base(op.Name) == ledger.FileName {
			syncs++
		}
		return nil
	}}
	s, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Meta{ID: "s"}, session.Options{Ledger: ledger.Options{FS: fsys}})
	if err != nil {
		t.Fatal(err)
	}
	syncs = 0
	if err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	set, _ := tool.New(pad{})
	a, _ := kernel.New(kernel.Config{Model: &growthModel{turns: turns + 1}, Tools: set, Recorder: s})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil || out.Turns != turns+1 {
		t.Fatalf("run: %v", err)
	}
	if err := s.EndRun(string(out.Status)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// turns tool turns × 2, the last model call's intent, the run's end.
	if want := 2*turns + 2; syncs != want {
		t.Fatalf("%d fsyncs of the ledger for %d tool turns, want %d", syncs, turns, want)
	}
}
