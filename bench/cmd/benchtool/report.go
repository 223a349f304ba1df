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

	"github.com/reinhq/rein/bench/mock"
)

// A compare.sh results folder holds SCENARIO/HARNESS/REP/{result.json,requests.jsonl}, plus
// fsync.json and machine.txt at its root.

// run is one measured run.
type run struct {
	rep     string // the repetition's folder name: 1, 2, …
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
		r := run{rep: parts[2]}
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
	// met says whether rein's median meets the target (given the newest pi's median); nil:
	// no target.
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

// harness is one column of the report: a results folder name and what the report calls it.
type harness struct{ id, label string }

// readHarnesses reads compare.sh's harnesses.tsv (id, tab, label per line); the first is rein.
func readHarnesses(dir string) ([]harness, error) {
	data, err := os.ReadFile(filepath.Join(dir, "harnesses.tsv"))
	if errors.Is(err, os.ErrNotExist) {
		return []harness{{"rein", "rein"}, {"pi", "pi"}}, nil
	}
	if err != nil {
		return nil, err
	}
	var out []harness
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		id, label, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("harnesses.tsv: %q is not ID<tab>LABEL", line)
		}
		out = append(out, harness{id, label})
	}
	if len(out) == 0 || out[0].id != "rein" {
		return nil, errors.New("harnesses.tsv: the first harness must be rein")
	}
	return out, nil
}

// report is what the report's sections are computed from.
type report struct {
	res       results
	harnesses []harness
	fsync     map[string]fsyncResult // probe name (start, rep-N, long-N) → result
	dir       string
}

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
	hs, err := readHarnesses(*dir)
	if err != nil {
		return err
	}
	rp := &report{res: res, harnesses: hs, fsync: map[string]fsyncResult{}, dir: *dir}
	probes, _ := filepath.Glob(filepath.Join(*dir, "fsync", "*.json"))
	for _, p := range probes {
		var f fsyncResult
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rp.fsync[strings.TrimSuffix(filepath.Base(p), ".json")] = f
	}
	var b strings.Builder
	rp.writeHeader(&b)
	rp.writeTable(&b)
	rp.writeFloor(&b)
	rp.writeFsync(&b)
	if err := rp.writeDelivery(&b); err != nil {
		return err
	}
	b.WriteString("\n## Gap per turn, 500-turn read loop\n\n![per-turn gap against turn number](gap.svg)\n\n" +
		"The thin line is, for each turn, the median over the runs of the gap after that turn; the thick\n" +
		"line is its running median over 25 turns (log scale).\n")
	if *machine != "" {
		data, err := os.ReadFile(*machine)
		if err != nil {
			return err
		}
		b.WriteString("\n## Machine\n\n```\n" + strings.TrimSpace(string(data)) + "\n```\n")
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		return err
	}
	series, order, labels := map[string][]float64{}, []string{}, map[string]string{}
	for _, h := range append(hs, harness{"rein-nosession", "rein --no-session"}, harness{"floor-k4", "floor, K = 4"}) {
		series[h.id], labels[h.id] = perTurnMedian(res["loop500"][h.id]), h.label
		order = append(order, h.id)
	}
	return os.WriteFile(*svgPath, []byte(gapSVG(series, order, labels)), 0o644)
}

func runCounts(res results) string {
	var parts []string
	for _, sc := range []string{"version", "task4", "read50", "bash50", "loop500", "resume"} {
		parts = append(parts, fmt.Sprintf("%s %d", sc, len(res[sc]["rein"])))
	}
	return strings.Join(parts, ", ")
}

// cell is a median with the range around it: "**m** (lo–hi)".
func cell(v []float64, digits int) string {
	if len(v) == 0 {
		return "—"
	}
	f := func(x float64) string { return fmt.Sprintf("%.*f", digits, x) }
	if len(v) == 1 {
		return "**" + f(v[0]) + "**"
	}
	return fmt.Sprintf("**%s** (%s–%s)", f(median(v)), f(slices.Min(v)), f(slices.Max(v)))
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
