package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reinhq/rein/bench/mock"
)

// A compare.sh results folder holds SCENARIO/HARNESS/REP/{result.json,requests.jsonl}, plus
// fsync.json and machine.txt at its root.

// run is one measured run.
type run struct {
	res     Result
	entries []mock.Entry
}

// gaps returns the harness gap after each response: the time from the end of response i to the
// arrival of request i+1, in milliseconds (index 0 is the gap after turn 1).
func (r *run) gaps() []float64 {
	var out []float64
	for i := 0; i+1 < len(r.entries); i++ {
		out = append(out, float64(r.entries[i+1].RecvNS-r.entries[i].DoneNS)/1e6)
	}
	return out
}

type results map[string]map[string][]run // scenario → harness → runs

func loadResults(dir string) (results, error) {
	out := results{}
	paths, err := filepath.Glob(filepath.Join(dir, "*", "*", "*", "result.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		parts := strings.Split(rel, string(filepath.Separator))
		scenario, harness := parts[0], parts[1]
		var r run
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &r.res); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if log := filepath.Join(filepath.Dir(p), "requests.jsonl"); fileExists(log) {
			if r.entries, err = readLog(log); err != nil {
				return nil, err
			}
		}
		if out[scenario] == nil {
			out[scenario] = map[string][]run{}
		}
		out[scenario][harness] = append(out[scenario][harness], r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no results under %s", dir)
	}
	return out, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// metric is one row of the table: per-run values of each harness.
type metric struct {
	name   string
	unit   string
	digits int
	values map[string][]float64 // harness → one value per run
	target string               // empty: none
	// met says whether rein's median meets the target (given pi's median); nil: no target.
	met func(rein, pi float64) bool
}

func perRun(runs []run, f func(r *run) float64) []float64 {
	var out []float64
	for i := range runs {
		if v := f(&runs[i]); !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func sliceGap(r *run, from, to int) float64 { // turns from..to, 1-based, inclusive
	g := r.gaps()
	if len(g) < to {
		return math.NaN()
	}
	return median(g[from-1 : to])
}

func bytesAt(r *run, n int) float64 {
	if len(r.entries) < n {
		return math.NaN()
	}
	return float64(r.entries[n-1].Bytes) / 1024
}

func totalBytes(r *run) float64 {
	t := 0
	for _, e := range r.entries {
		t += e.Bytes
	}
	return float64(t) / 1024
}

// Harnesses in table order.
var harnesses = []string{"rein", "pi"}

func reportCmd(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	dir := fs.String("results", "", "results folder of compare.sh")
	out := fs.String("out", "bench/REPORT.md", "report file")
	svgPath := fs.String("svg", "bench/gap.svg", "chart file")
	machine := fs.String("machine", "", "machine description (text)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("report: --results is required")
	}
	res, err := loadResults(*dir)
	if err != nil {
		return err
	}
	var fsyncs []fsyncResult
	probes, _ := filepath.Glob(filepath.Join(*dir, "fsync", "*.json"))
	for _, p := range probes {
		var f fsyncResult
		if data, err := os.ReadFile(p); err == nil && json.Unmarshal(data, &f) == nil {
			fsyncs = append(fsyncs, f)
		}
	}
	ms := func(v float64) float64 { return v }
	get := func(scenario string, f func(r *run) float64) map[string][]float64 {
		m := map[string][]float64{}
		for h, runs := range res[scenario] {
			m[h] = perRun(runs, f)
		}
		return m
	}
	wall := func(r *run) float64 { return ms(r.res.WallMS) }
	cpu := func(r *run) float64 { return r.res.UserMS + r.res.SysMS }
	rss := func(r *run) float64 { return float64(r.res.MaxRSSKB) / 1024 }
	anon := func(r *run) float64 { return float64(r.res.AnonKB) / 1024 }
	file := func(r *run) float64 { return float64(r.res.FileKB) / 1024 }
	firstReq := func(r *run) float64 {
		if len(r.entries) == 0 {
			return math.NaN()
		}
		return float64(r.entries[0].RecvNS-r.res.StartNS) / 1e6
	}
	gapMedian := func(r *run) float64 { return median(r.gaps()) }
	le := func(limit float64) func(rein, pi float64) bool { return func(r, _ float64) bool { return r <= limit } }

	// The growth allowance: what the larger body costs to encode, copy and send, taken as
	// 5 µs per KiB (200 MiB/s), measured between the medians of turns 1–50 and 451–500.
	growthAllow := func(h string) float64 {
		var extra []float64
		for i := range res["loop500"][h] {
			r := &res["loop500"][h][i]
			extra = append(extra, bytesAt(r, 476)-bytesAt(r, 26))
		}
		return median(extra) * 0.005
	}
	metrics := []metric{
		{name: "`--version`", unit: "ms", digits: 1, values: get("version", wall)},
		{name: "process start → first model request", unit: "ms", digits: 1, values: get("task4", firstReq),
			target: "≤ 30 ms", met: le(30)},
		{name: "4-turn task: wall", unit: "ms", digits: 1, values: get("task4", wall),
			target: "≤ pi / 10", met: func(r, p float64) bool { return r <= p/10 }},
		{name: "4-turn task: CPU (user+sys)", unit: "ms", digits: 1, values: get("task4", cpu)},
		{name: "4-turn task: peak RSS", unit: "MB", digits: 1, values: get("task4", rss), target: "≤ 30 MB", met: le(30)},
		{name: "4-turn task: peak anonymous RSS (sampled)", unit: "MB", digits: 1, values: get("task4", anon)},
		{name: "4-turn task: peak file-backed RSS (sampled)", unit: "MB", digits: 1, values: get("task4", file)},
		{name: "first request size", unit: "KB", digits: 2, values: get("task4", func(r *run) float64 { return bytesAt(r, 1) })},
		{name: "4-turn task: bytes per request (mean)", unit: "KB", digits: 2, values: get("task4", func(r *run) float64 {
			return totalBytes(r) / float64(max(1, len(r.entries)))
		})},
		{name: "4-turn task: bytes sent in total", unit: "KB", digits: 1, values: get("task4", totalBytes)},
		{name: "50-turn read loop: gap per turn (median)", unit: "ms", digits: 2, values: get("read50", gapMedian),
			target: "≤ 2 ms", met: le(2)},
		{name: "50-turn read loop: wall", unit: "ms", digits: 0, values: get("read50", wall)},
		{name: "50-turn bash loop: gap per turn (median)", unit: "ms", digits: 2, values: get("bash50", gapMedian),
			target: "≤ 8 ms", met: le(8)},
		{name: "50-turn bash loop: wall", unit: "ms", digits: 0, values: get("bash50", wall)},
		{name: "500-turn loop: gap, turns 1–50 (median)", unit: "ms", digits: 2, values: get("loop500", func(r *run) float64 { return sliceGap(r, 1, 50) })},
		{name: "500-turn loop: gap, turns 451–500 (median)", unit: "ms", digits: 2, values: get("loop500", func(r *run) float64 { return sliceGap(r, 451, 500) })},
		{name: "500-turn loop: gap growth, turns 1–50 → 451–500", unit: "ms", digits: 2,
			values: get("loop500", func(r *run) float64 { return sliceGap(r, 451, 500) - sliceGap(r, 1, 50) }),
			target: "≤ body cost (5 µs/KB)", met: func(r, _ float64) bool { return r <= growthAllow("rein") }},
		{name: "500-turn loop: request size at turn 50", unit: "KB", digits: 1, values: get("loop500", func(r *run) float64 { return bytesAt(r, 50) })},
		{name: "500-turn loop: request size at turn 500", unit: "KB", digits: 1, values: get("loop500", func(r *run) float64 { return bytesAt(r, 500) })},
		{name: "500-turn loop: bytes sent in total", unit: "MB", digits: 1, values: get("loop500", func(r *run) float64 { return totalBytes(r) / 1024 })},
		{name: "500-turn loop: wall", unit: "s", digits: 2, values: get("loop500", func(r *run) float64 { return r.res.WallMS / 1000 })},
		{name: "500-turn loop: CPU (user+sys)", unit: "s", digits: 2, values: get("loop500", func(r *run) float64 { return cpu(r) / 1000 })},
		{name: "500-turn loop: peak RSS", unit: "MB", digits: 1, values: get("loop500", rss), target: "≤ 60 MB", met: le(60)},
		{name: "500-turn loop: peak anonymous RSS (sampled)", unit: "MB", digits: 1, values: get("loop500", anon)},
		{name: "resume a 1,002-message session, no model call: wall", unit: "ms", digits: 1, values: get("resume", wall)},
		{name: "resume a 1,002-message session: peak RSS", unit: "MB", digits: 1, values: get("resume", rss)},
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# rein and pi side by side\n\n")
	fmt.Fprintf(&b, "Generated by `bench/compare.sh` on %s (regenerate: see the README's Benchmarks section). Both\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	b.WriteString("harnesses ran against the same scripted mock LLM (`bench/mock`, OpenAI Chat Completions\n" +
		"streaming, no delays) with separate temporary homes, interleaved run by run (the order flipped\n" +
		"every repetition). rein ran with durable sessions (every intent and result fsynced), pi with its\n" +
		"default session file. Each value is taken per run; the table shows min / median / max over the\n" +
		"runs and the ratio of the medians. The *gap* is the harness's own time per turn: from the end\n" +
		"of one streamed response (the mock's log) to the arrival of the next request — tool\n" +
		"execution, recording, and building and sending the request. Peak RSS and CPU come from wait4\n" +
		"(the process and the children it waited for); the anonymous (heap, stacks) and file-backed\n" +
		"(mapped executable) parts of the process's own RSS are sampled from /proc every 5 ms.\n\n")
	b.WriteString("What the targets' misses come from, and what was changed for them: [NOTES.md](NOTES.md).\n\n")
	b.WriteString("| metric | rein min / median / max | pi min / median / max | rein / pi | target (rein) |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, m := range metrics {
		rv, pv := m.values["rein"], m.values["pi"]
		ratio := "—"
		if len(rv) > 0 && len(pv) > 0 && median(pv) != 0 {
			ratio = fmt.Sprintf("%.3g", median(rv)/median(pv))
		}
		target := ""
		if m.target != "" {
			verdict := "n/a"
			if len(rv) > 0 && (len(pv) > 0 || !strings.Contains(m.target, "pi")) {
				if m.met(median(rv), median(pv)) {
					verdict = "**met**"
				} else {
					verdict = "**missed**"
				}
			}
			target = m.target + ": " + verdict
		}
		fmt.Fprintf(&b, "| %s (%s) | %s | %s | %s | %s |\n", m.name, m.unit, triple(rv, m.digits), triple(pv, m.digits), ratio, target)
	}
	fmt.Fprintf(&b, "\nRuns per harness: %s.\nThe growth allowance of the 500-turn loop is the cost of the larger body, taken as 5 µs per KB\n"+
		"of extra request (200 MB/s to encode, copy and send): %.2f ms for rein.\n",
		runCounts(res), growthAllow("rein"))

	// Extra rows: rein without a session, to separate the fsync cost.
	if ns := res["read50"]["rein-nosession"]; len(ns) > 0 {
		b.WriteString("\n## rein without durability (`--no-session`), for reference\n\n")
		b.WriteString("The same runs with rein's session kept in memory, interleaved with the others: the\n" +
			"difference to the durable runs is what the fsyncs cost on this machine's disk.\n\n")
		b.WriteString("| metric | rein --no-session min / median / max | rein (durable, above) median |\n|---|---|---|\n")
		for _, row := range []struct {
			name, scenario string
			f              func(*run) float64
		}{
			{"process start → first model request (ms)", "task4", firstReq},
			{"4-turn task: wall (ms)", "task4", wall},
			{"50-turn read loop: gap per turn (median) (ms)", "read50", gapMedian},
			{"50-turn bash loop: gap per turn (median) (ms)", "bash50", gapMedian},
		} {
			fmt.Fprintf(&b, "| %s | %s | %.2f |\n", row.name, triple(perRun(res[row.scenario]["rein-nosession"], row.f), 2),
				median(perRun(res[row.scenario]["rein"], row.f)))
		}
	}
	if len(fsyncs) > 0 {
		var meds, means, p90s []float64
		for _, f := range fsyncs {
			meds, means, p90s = append(meds, f.MedianMS), append(means, f.MeanMS), append(p90s, f.P90MS)
		}
		fmt.Fprintf(&b, "\nfsync latency of the benchmark's file system, probed %d times during the run (%d appends of\n"+
			"%d bytes, each fsynced, per probe). rein fsyncs 4 records between two model requests of a tool\n"+
			"turn: the response, the tool's intent, the tool's result, the next call's intent.\n\n", len(fsyncs), fsyncs[0].N, fsyncs[0].Bytes)
		b.WriteString("| fsync latency of a probe (ms) | min / median / max over the probes |\n|---|---|\n")
		fmt.Fprintf(&b, "| median | %s |\n| mean | %s |\n| 90th percentile | %s |\n", triple(meds, 2), triple(means, 2), triple(p90s, 2))
	}
	b.WriteString("\n## Gap per turn, 500-turn read loop\n\n![per-turn gap against turn number](gap.svg)\n\n" +
		"The thin line is, for each turn, the median over the runs of the gap after that turn; the thick\n" +
		"line is its running median over 25 turns (log scale).\n")
	if *machine != "" {
		if data, err := os.ReadFile(*machine); err == nil {
			b.WriteString("\n## Machine\n\n```\n" + strings.TrimSpace(string(data)) + "\n```\n")
		}
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		return err
	}
	series := map[string][]float64{}
	for _, h := range harnesses {
		series[h] = perTurnMedian(res["loop500"][h])
	}
	return os.WriteFile(*svgPath, []byte(gapSVG(series)), 0o644)
}

func runCounts(res results) string {
	var parts []string
	for _, sc := range []string{"version", "task4", "read50", "bash50", "loop500", "resume"} {
		parts = append(parts, fmt.Sprintf("%s %d", sc, len(res[sc]["rein"])))
	}
	return strings.Join(parts, ", ")
}

func triple(v []float64, digits int) string {
	if len(v) == 0 {
		return "—"
	}
	f := func(x float64) string { return fmt.Sprintf("%.*f", digits, x) }
	return fmt.Sprintf("%s / **%s** / %s", f(slices.Min(v)), f(median(v)), f(slices.Max(v)))
}

// perTurnMedian is, for each turn, the median over the runs of the gap after it.
func perTurnMedian(runs []run) []float64 {
	var all [][]float64
	n := math.MaxInt
	for i := range runs {
		g := runs[i].gaps()
		all = append(all, g)
		n = min(n, len(g))
	}
	if len(all) == 0 {
		return nil
	}
	out := make([]float64, n)
	for t := range n {
		var xs []float64
		for _, g := range all {
			xs = append(xs, g[t])
		}
		out[t] = median(xs)
	}
	return out
}
