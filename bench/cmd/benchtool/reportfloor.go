package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/bench/runbytes"
)

// fsyncsPerTurn is what a harness fsyncs between two model requests of a turn of the read loops
// (the only scenarios the floor runs): rein the next model call's intent (a local read's intent,
// the response and the result ride on it; a tool with effects adds its own intent's), the floor
// K.
var fsyncsPerTurn = map[string]float64{"rein": 1, "floor-k1": 1, "floor-k4": 4}

// probeFor names the fsync probe taken in the repetition of a scenario's run.
func probeFor(scenario, rep string) string {
	if scenario == "loop500" || scenario == "resume" {
		return "long-" + rep
	}
	return "rep-" + rep
}

// paired is f(a) − f(b) for each repetition that has both runs.
func (rp *report) paired(scenario, a, b string, f func(*run) float64) []float64 {
	byRep := map[string]*run{}
	for i := range rp.res[scenario][b] {
		byRep[rp.res[scenario][b][i].rep] = &rp.res[scenario][b][i]
	}
	var out []float64
	for i := range rp.res[scenario][a] {
		r := &rp.res[scenario][a][i]
		if o := byRep[r.rep]; o != nil {
			if d := f(r) - f(o); !math.IsNaN(d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// netOfFsync is f(run) less the fsyncs per turn at the median latency of the run's probe (the
// median, as the gaps are medians over turns: a mean would charge every turn the disk's tail).
func (rp *report) netOfFsync(scenario, harness string, f func(*run) float64) func(*run) float64 {
	return func(r *run) float64 {
		p, ok := rp.fsync[probeFor(scenario, r.rep)]
		if !ok {
			return math.NaN()
		}
		return f(r) - fsyncsPerTurn[harness]*p.MedianMS
	}
}

func (rp *report) writeFloor(b *strings.Builder) {
	if len(rp.res["read50"]["floor-k4"]) == 0 {
		return
	}
	b.WriteString("\n## Against the floor, net of fsync\n\n" +
		"The floor (`bench/cmd/floor`, a release build of a program linking only net/http and\n" +
		"encoding/json) is the least a client can do per turn and still be an agent:\n" +
		"stream the whole history (each message encoded once), run the read tool, append K lines of\n" +
		"~300 bytes and fsync each (K = 0: no durability; K = 1: what rein fsyncs per turn of reads, the\n" +
		"next model call's intent, on which the read's intent and result ride; K = 4: what it fsynced\n" +
		"before results and reads rode on the next intent). It ran under `benchtool run` against the\n" +
		"same mock in every repetition, interleaved with the harnesses. *Paired* rows are the median over repetitions of the\n" +
		"difference within each repetition, which cancels what the machine's load did to both; *net\n" +
		"of fsync* subtracts the harness's fsyncs per turn (rein 1, the floor K) × the median fsync\n" +
		"latency probed in the same repetition from the durable runs' gaps, so a slow disk is not read\n" +
		"as a regression of rein. A disk's flush costs more after a longer quiet time, and the fsync\n" +
		"that follows a model's answer waits longer as the history grows (bench/NOTES.md, \"Durable\n" +
		"growth on disk\"): the growth of rein paired with the K = 1 floor's is rein's own. The K = 1\n" +
		"and K = 4 floors start durably (`--durable-start`): before the first request they create their\n" +
		"journal three new directories deep, as rein creates a session, and fsync one record, the file\n" +
		"and the directories; their process start → first request is the floor of rein's.\n\n")
	b.WriteString("| gap or start (ms) | floor K = 0 | floor K = 1 | floor K = 4 | rein --no-session | rein (durable) | target (rein) |\n|---|---|---|---|---|---|---|\n")
	ids := []string{"floor-k0", "floor-k1", "floor-k4", "rein-nosession", "rein"}
	row := func(name, scenario string, f func(h string) func(*run) float64, target string) {
		cells := []string{name}
		for _, h := range ids {
			if strings.Contains(name, "net of fsync") && (h == "floor-k0" || h == "rein-nosession") {
				cells = append(cells, "—") // nothing fsynced
				continue
			}
			cells = append(cells, cell(perRun(rp.res[scenario][h], f(h)), 2))
		}
		b.WriteString("| " + strings.Join(append(cells, target), " | ") + " |\n")
	}
	same := func(f func(*run) float64) func(string) func(*run) float64 {
		return func(string) func(*run) float64 { return f }
	}
	net := func(scenario string, f func(*run) float64) func(string) func(*run) float64 {
		return func(h string) func(*run) float64 { return rp.netOfFsync(scenario, h, f) }
	}
	late := func(r *run) float64 { return sliceGap(r, 451, 500) }
	row("process start → first model request (50-turn read loop)", "read50", same(firstReqOf), "")
	row("50-turn read loop, median", "read50", same(gapOf), "")
	row("50-turn read loop, net of fsync", "read50", net("read50", gapOf), "")
	row("500-turn loop, turns 1–50", "loop500", same(func(r *run) float64 { return sliceGap(r, 1, 50) }), "")
	row("500-turn loop, turns 451–500", "loop500", same(late), "")
	row("500-turn loop, turns 451–500, net of fsync", "loop500", net("loop500", late), "")
	ns, dur := perRun(rp.res["loop500"]["rein-nosession"], growthOf), perRun(rp.res["loop500"]["rein"], growthOf)
	row("500-turn loop, growth 1–50 → 451–500", "loop500", same(growthOf),
		fmt.Sprintf("≤ 0.3 without a session: %s; ≤ 0.5 with: %s", verdict(ns, 0.3), verdict(dur, 0.5)))
	g0 := rp.paired("loop500", "rein-nosession", "floor-k0", growthOf)
	fmt.Fprintf(b, "| 500-turn loop, growth: rein --no-session − floor K = 0, paired | | | | %s | | |\n", cell(g0, 2))
	g := rp.paired("loop500", "rein", "floor-k1", growthOf)
	fmt.Fprintf(b, "| 500-turn loop, growth: rein − floor K = 1, paired | | | | | %s | |\n", cell(g, 2))
	d := rp.paired("read50", "rein", "floor-k4", gapOf)
	fmt.Fprintf(b, "| 50-turn read loop: rein − floor K = 4, paired | | | | | %s | ≤ 0.3: %s |\n", cell(d, 2), verdict(d, 0.3))
	d2 := rp.paired("read50", "rein", "floor-k1", gapOf)
	fmt.Fprintf(b, "| 50-turn read loop: rein − floor K = 1, paired | | | | | %s | |\n", cell(d2, 2))
	s2 := rp.paired("read50", "rein", "floor-k1", firstReqOf)
	fmt.Fprintf(b, "| process start → first model request: rein − floor K = 1 (durable start), paired | | | | | %s | |\n", cell(s2, 2))
	s0 := rp.paired("read50", "rein-nosession", "floor-k0", firstReqOf)
	fmt.Fprintf(b, "| process start → first model request: rein --no-session − floor K = 0, paired | | | | %s | | |\n", cell(s0, 2))
	n := rp.paired("read50", "rein-nosession", "floor-k0", gapOf)
	fmt.Fprintf(b, "| 50-turn read loop: rein --no-session − floor K = 0, paired | | | | %s | | |\n", cell(n, 2))
}

func verdict(v []float64, limit float64) string {
	if len(v) == 0 {
		return "n/a"
	}
	if median(v) <= limit {
		return "**met**"
	}
	return "**missed**"
}

func (rp *report) writeFsync(b *strings.Builder) {
	if len(rp.fsync) == 0 {
		return
	}
	names := make([]string, 0, len(rp.fsync))
	for k := range rp.fsync {
		names = append(names, k)
	}
	slices.Sort(names)
	any := rp.fsync[names[0]]
	fmt.Fprintf(b, "\nfsync latency of the benchmark's file system, probed %d times (at the start and before every\n"+
		"repetition; %d appends of %d bytes, each fsynced, per probe):\n\n", len(names), any.N, any.Bytes)
	b.WriteString("| probe | median (ms) | mean | 90th percentile | max |\n|---|---|---|---|---|\n")
	for _, k := range names {
		p := rp.fsync[k]
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %.2f | %.2f |\n", k, p.MedianMS, p.MeanMS, p.P90MS, p.MaxMS)
	}
}

// writeDelivery adds bench/runbytes's figures (delivery.json) when the run has them.
func (rp *report) writeDelivery(b *strings.Builder) error {
	data, err := os.ReadFile(filepath.Join(rp.dir, "delivery.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var f runbytes.Figures
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("delivery.json: %w", err)
	}
	b.WriteString("\n## A delivery run's request bytes\n\n" +
		"`bench/runbytes` takes the requirement of `rein demo delivery` through a whole delivery run\n" +
		"(every stage to Delivery Ready, real git and go test), its three roles on openai-compat models\n" +
		"served by the mock, which answers from the demo's scenarios, and keeps every request body. Bytes\n" +
		"as sent. *Fixed* is the system message and the tool schemas; *first user message* is the\n" +
		"stage's request prefix and its rendered pack (JSON-escaped); the rest of a first request is\n" +
		"framing and parameters. *One session* is what a single session carrying the same history\n" +
		"would send: every request carrying, in addition, the final transcripts of all earlier sessions.\n" +
		"Method: [NOTES.md](NOTES.md#a-delivery-runs-request-bytes).\n\n")
	b.WriteString("| session | model | requests | first request (B) | of it fixed | of it first user message | all requests (B) | as one session (B) |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range f.Sessions {
		fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %d | %d |\n", s.Stage, s.Model, s.Requests, s.FirstBytes,
			s.FixedBytes, s.PackBytes, s.TotalBytes, s.OneSessionBytes)
	}
	fmt.Fprintf(b, "\nThe whole run: %d sessions, %d requests, %s bytes; one session carrying the same history\n"+
		"would send %s bytes: the run sends **%.2f×** that (%.0f %% less).\n", len(f.Sessions), f.Requests,
		thousands(f.TotalBytes), thousands(f.OneSessionBytes), f.Ratio, 100*(1-f.Ratio))
	return nil
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
