package loop

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
)

// firings reads loop id's loop.trigger records.
func firings(t *testing.T, home, id string) []Firing {
	t.Helper()
	var fs []Firing
	_, _, err := ledger.OpenReadOnly(loopDir(home, id), ledger.Options{Visit: func(r ledger.Record) error {
		if r.Kind == KindTrigger {
			var f Firing
			if err := json.Unmarshal(r.Body, &f); err != nil {
				return err
			}
			fs = append(fs, f)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestTriggerValidation(t *testing.T) {
	for _, tc := range []struct{ trigger, want string }{
		{"every 30s", "at least 1m0s"},
		{"every soon", "at least 1m0s"},
		{"watch ../elsewhere", "inside it"},
		{"watch /etc", "inside it"},
		{"watch .rein/settings.json", "under .rein or .git"},
		{"watch src/.git", "under .rein or .git"},
	} {
		_, err := ParseContract([]byte(contractYAML(map[string]string{"trigger": tc.trigger})), "loop.yaml")
		if err == nil || !strings.Contains(err.Error(), "loop.yaml:1: trigger: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("trigger %q: %v, want loop.yaml:1 naming %q", tc.trigger, err, tc.want)
		}
	}
	c, err := ParseContract([]byte(contractYAML(map[string]string{"trigger": "watch ./src tests/ src"})), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Normalized.Trigger; got.Kind != TriggerWatch || !slices.Equal(got.Paths, []string{"src", "tests"}) {
		t.Errorf("normalized %+v, want watch [src tests]", got)
	}
}

func TestStartTriggerMustAgreeWithContract(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"trigger": "every 10m"}))
	start := func(flag string) error {
		_, err := Start(f.env, StartOptions{File: f.file, Workspace: f.ws, Trigger: flag, Model: ModelRef{Provider: "script", Script: f.scenarioF}})
		return err
	}
	err := start("manual")
	if !errors.Is(err, ErrTrigger) || !strings.Contains(err.Error(), `--trigger "manual" differs from the contract's trigger "every 10m"`) {
		t.Fatalf("a --trigger unlike the contract's: %v", err)
	}
	if err := start("every 10s"); !errors.Is(err, ErrTrigger) || !strings.Contains(err.Error(), "at least 1m0s") {
		t.Fatalf("--trigger 'every 10s': %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(f.env.Home, LoopsDir)); len(ents) != 0 {
		t.Fatalf("a refused start created %d loop(s)", len(ents))
	}
	if err := start("every  10m"); err != nil {
		t.Fatalf("the contract's own trigger as --trigger: %v", err)
	}
}

func TestStartRefusesAWatchPathLeavingTheWorkspace(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"trigger": "watch out"}))
	if err := os.Symlink(t.TempDir(), filepath.Join(f.ws, "out")); err != nil {
		t.Fatal(err)
	}
	// the link itself is inside the workspace: it is watched as a link, never followed out.
	if _, err := Start(f.env, StartOptions{File: f.file, Workspace: f.ws, Model: ModelRef{Provider: "script", Script: f.scenarioF}}); err != nil {
		t.Fatal(err)
	}
	w, err := newWatcher(f.ws, f.env.Home, []string{"out"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if len(w.last) != 1 || w.last["out"].mode&os.ModeSymlink == 0 {
		t.Fatalf("the watcher followed a symlink out of the workspace: %v", w.last)
	}
	f2 := newFixture(t, contractYAML(map[string]string{"trigger": "watch out/sub"}))
	if err := os.Symlink(t.TempDir(), filepath.Join(f2.ws, "out")); err != nil {
		t.Fatal(err)
	}
	_, err = Start(f2.env, StartOptions{File: f2.file, Workspace: f2.ws, Model: ModelRef{Provider: "script", Script: f2.scenarioF}})
	if !errors.Is(err, ErrTrigger) || !strings.Contains(err.Error(), "inside the workspace") {
		t.Fatalf("a watch path through a symlink out of the workspace: %v", err)
	}
}

// TestWatchDebounce: a burst of writes spread over several polls fires once, after the
// quiet spell; writes under .rein, .git and $REIN_HOME never fire.
func TestWatchDebounce(t *testing.T) {
	ws := t.TempDir()
	home := filepath.Join(ws, "home")
	for _, d := range []string{"src", ".rein", ".git", "home/loops", "src/.rein"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, err := newWatcher(ws, home, []string{"."}, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	poll := func(at time.Duration) []string {
		t.Helper()
		got, err := w.poll(t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	var fired [][]string
	step := func(at time.Duration, write ...string) {
		for _, p := range write {
			mustWrite(t, filepath.Join(ws, p), "x"+p)
		}
		if got := poll(at); got != nil {
			fired = append(fired, got)
		}
	}
	// rein's own writes: nothing fires, however long one waits.
	step(0, ".rein/settings.json", ".git/index", "home/loops/x", "src/.rein/y")
	step(time.Second)
	step(10 * time.Second)
	if len(fired) != 0 {
		t.Fatalf("writes under .rein, .git and $REIN_HOME fired %v", fired)
	}
	// a burst over three polls, then quiet.
	step(20*time.Second, "src/a.go")
	step(20*time.Second+100*time.Millisecond, "src/b.go", "src/a.go")
	step(20*time.Second+200*time.Millisecond, "top.txt")
	step(20*time.Second + 400*time.Millisecond) // quiet, but not for long enough
	if len(fired) != 0 {
		t.Fatalf("fired during the burst: %v", fired)
	}
	step(20*time.Second + 800*time.Millisecond)
	step(30 * time.Second)
	if len(fired) != 1 || !slices.Equal(fired[0], []string{"src/a.go", "src/b.go", "top.txt"}) {
		t.Fatalf("fired %v, want once with src/a.go src/b.go top.txt", fired)
	}
	// a removal and a rename are changes too.
	if err := os.Rename(filepath.Join(ws, "top.txt"), filepath.Join(ws, "src", "moved.txt")); err != nil {
		t.Fatal(err)
	}
	step(40 * time.Second)
	step(41 * time.Second)
	if len(fired) != 2 || !slices.Equal(fired[1], []string{"src/moved.txt", "top.txt"}) {
		t.Fatalf("fired %v, want a second firing for the rename", fired)
	}
}
