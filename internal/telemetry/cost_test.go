package telemetry_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/telemetry"
	"github.com/reinhq/rein/internal/tool"
)

// recordRun runs scenario into a new session in dir and returns the session's state.
func recordRun(t *testing.T, dir, cwd, scenario string, at time.Time) *session.State {
	t.Helper()
	s, err := session.Create(dir, session.Meta{ID: filepath.Base(dir), Cwd: cwd}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := script.Parse([]byte(scenario), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, _ := tool.New(echo{})
	a, err := kernel.New(kernel.Config{Model: llm.Retry(m, llm.RetryPolicy{MaxAttempts: 1}), Tools: set, Recorder: s,
		Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, _, err := session.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCosts(t *testing.T) {
	root := t.TempDir()
	day1 := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	day2 := day1.Add(2 * time.Hour) // the next day in UTC
	a := recordRun(t, filepath.Join(root, "a"), "/src/api", twoTurns, day1)
	b := recordRun(t, filepath.Join(root, "b"), "/src/web", "version: 1\nmodel: other\npricing: {input: 1, output: 1}\nturns:\n  - {text: hi, usage: {input: 1000000, output: 0, cacheRead: 7}}\n", day2)
	// A fork copies a's conversation (with its usage) into a new session; it must not be
	// counted twice.
	fork, err := session.Fork(a, "", filepath.Join(root, "fork"), session.Meta{ID: "fork", Cwd: "/src/api"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fork.Close()
	forked, _, err := session.Load(filepath.Join(root, "fork"))
	if err != nil {
		t.Fatal(err)
	}

	c := telemetry.NewCosts(time.UTC)
	for _, st := range []*session.State{a, b, forked} {
		c.Add(st)
	}
	ignore := cmpopts.IgnoreUnexported(telemetry.Row{})
	approx := cmpopts.EquateApprox(0, 1e-12)
	aCost := (100*3 + 10*15 + 120*3 + 5*15) / 1e6
	want := map[telemetry.Dimension][]telemetry.Row{
		telemetry.ByModel: {
			{Key: "script/other", Sessions: 1, Requests: 1, Input: 1000000, CacheRead: 7, Cost: 1},
			{Key: "script/script-answer", Sessions: 1, Requests: 2, Input: 220, Output: 15, Cost: aCost},
		},
		telemetry.ByDay: {
			{Key: "2026-03-01", Sessions: 1, Requests: 2, Input: 220, Output: 15, Cost: aCost},
			{Key: "2026-03-02", Sessions: 1, Requests: 1, Input: 1000000, CacheRead: 7, Cost: 1},
		},
		telemetry.ByProject: {
			{Key: "/src/web", Sessions: 1, Requests: 1, Input: 1000000, CacheRead: 7, Cost: 1},
			{Key: "/src/api", Sessions: 1, Requests: 2, Input: 220, Output: 15, Cost: aCost},
		},
	}
	for d, w := range want {
		got, err := c.Rows(d)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w, got, ignore, approx); diff != "" {
			t.Errorf("by %s (-want +got):\n%s", d, diff)
		}
	}
	total := telemetry.Row{Key: "total", Sessions: 2, Requests: 3, Input: 1000220, Output: 15, CacheRead: 7, Cost: 1 + aCost}
	if diff := cmp.Diff(total, c.Total(), ignore, approx); diff != "" {
		t.Errorf("total (-want +got):\n%s", diff)
	}
	if _, err := c.Rows("week"); err == nil {
		t.Error("unknown dimension accepted")
	}
}
