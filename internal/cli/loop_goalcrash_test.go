package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/loop"
)

// TestLoopGoalCrashChild is the goal-run crash test's child: it runs loop
// REIN_GOALCRASH_LOOP as rein loop run does (the CLI's loop environment, the run engine
// behind loop.Runs) and SIGKILLs itself at the REIN_GOALCRASH_ROUND-th time it reaches the
// round point REIN_GOALCRASH_AT.
func TestLoopGoalCrashChild(t *testing.T) {
	id := os.Getenv("REIN_GOALCRASH_LOOP")
	if id == "" {
		t.Skip("runs only as TestCrashDuringAGoalRound's child process")
	}
	at := os.Getenv("REIN_GOALCRASH_AT")
	nth, _ := strconv.Atoi(os.Getenv("REIN_GOALCRASH_ROUND"))
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: os.Stderr, getenv: os.Getenv}
	lenv, err := loopEnv(e)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	crash := func(point string) {
		if point == at {
			if seen++; seen == nth {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	if stage, ok := strings.CutPrefix(at, "run:"); ok {
		// A point of the run engine's own steps (run.Env.Crash), inside the round's advance.
		runs := &loopRuns{e: e}
		if _, err := runs.runEnv(); err != nil {
			t.Fatal(err)
		}
		runs.env.Crash = func(point string) { crash("run:" + point) }
		lenv.Runs, at = runs, "run:"+stage
	} else {
		lenv.Crash = crash
	}
	if _, err := loop.Run(context.Background(), lenv, id); err != nil {
		t.Fatal(err)
	}
}

// TestCrashDuringAGoalRound SIGKILLs a real process running a loop whose goal is a delivery
// run, in round 1 (the run's research stage) and round 2 (its specification, after which the
// run waits at the Spec Gate): before the round's start record, before the run is advanced,
// inside the run's stage (before its session, after its artifact: the run engine's own crash
// points), after the run's stage advanced but before the loop verified or recorded the
// round's end, and after the end. Resuming as a person would (rein loop run): the run's own
// ledger started and completed exactly the stages the uncrashed loop's did (no stage advanced
// twice for one round; a stage the crash cut short is started again once, by the run's own
// recovery, recorded in its ledger), the
// loop waits exactly when the run does and names its gate, what the crash left is a prefix of
// the loop ledger after, no round starts twice; and driven on, the loop completes exactly
// when the run is at Delivery Ready.
func TestCrashDuringAGoalRound(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary; delivery runs")
	}
	// The uncrashed loop's first rein loop run: the stages its run starts until the Spec Gate.
	ref := newGoalLoop(t)
	ref.start(t)
	if code, out := ref.rein("loop", "run", ref.id); code != 4 {
		t.Fatalf("the uncrashed loop's first run: exit %d\n%s", code, out)
	}
	want, wantDone, _ := runStages(t, ref.home, ref.run)
	refRep, err := loop.Status(loop.Env{Home: ref.home}, ref.id)
	if err != nil {
		t.Fatal(err)
	}
	if rs := runStatus(t, ref.rein, ref.run); rs.Waiting.Gate != "spec" || !slices.Contains(want, "specification") {
		t.Fatalf("the uncrashed loop stopped with the run at %s (gate %q), stages %v", rs.Stage, rs.Waiting.Gate, want)
	}
	type point struct {
		at    string
		round int
		drive bool // drive the resumed loop to completion
	}
	points := []point{{"session", 1, false}, {"verify", 1, false}, {"round-start", 2, false}, {"session", 2, false},
		{"verify", 2, true}, {"verified", 2, false}, {"ended", 2, false}, {"run:session", 2, false}, {"run:artifact", 2, false}}
	for _, p := range points {
		t.Run(fmt.Sprintf("round%d/%s", p.round, strings.ReplaceAll(p.at, ":", "_")), func(t *testing.T) {
			g := newGoalLoop(t)
			g.start(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestLoopGoalCrashChild$", "-test.count=1")
			cmd.Dir = g.repo
			cmd.Env = append(os.Environ(), "REIN_GOALCRASH_LOOP="+g.id, "REIN_GOALCRASH_AT="+p.at, "REIN_GOALCRASH_ROUND="+strconv.Itoa(p.round))
			out, err := cmd.CombinedOutput()
			if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %s of round %d (%v)\n%s", p.at, p.round, err, out)
			}
			left := loopRecords(t, g.home, g.id)
			code, out2 := g.rein("loop", "run", g.id)
			rep, err := loop.Status(loop.Env{Home: g.home}, g.id)
			if err != nil {
				t.Fatal(err)
			}
			rs := runStatus(t, g.rein, g.run)
			if code != 4 || rep.State != loop.StateWaitingForHuman || rep.Reason != loop.ReasonRunWaiting || rs.Waiting.Gate != "spec" || !strings.Contains(rep.Detail, "gate spec") {
				t.Fatalf("resumed: loop %s (%s: %s), exit %d; run %s at %s (gate %q): the loop must wait exactly when the run does\n%s",
					rep.State, rep.Reason, rep.Detail, code, rs.State, rs.Stage, rs.Waiting.Gate, out2)
			}
			// Only a round killed before it advanced the run costs a round more: one the run
			// advanced is closed as the run's state says (waiting at the gate), not again.
			extra := 0
			if p.at == "session" || strings.HasPrefix(p.at, "run:") {
				extra = 1
			}
			if rep.Rounds != refRep.Rounds+extra {
				t.Fatalf("resumed loop took %d rounds, the uncrashed one %d (+%d for a round killed before it advanced the run)", rep.Rounds, refRep.Rounds, extra)
			}
			got, done, restarts := runStages(t, g.home, g.run)
			if !slices.Equal(got, want) || !slices.Equal(done, wantDone) {
				t.Fatalf("the run started stages %v and completed %v, the uncrashed loop's run %v and %v: a stage was advanced twice", got, done, want, wantDone)
			}
			// Only a crash inside the run's own stage leaves an attempt the run starts again.
			if runPoint := strings.HasPrefix(p.at, "run:"); restarts > 1 || restarts == 1 && !runPoint {
				t.Fatalf("the run started an interrupted stage again %d times (crash at %s)", restarts, p.at)
			}
			after := loopRecords(t, g.home, g.id)
			for i, r := range left {
				if i >= len(after) || after[i] != r {
					t.Fatalf("loop record %d (%s) recorded before the resume is gone or changed after it", i+1, r.Kind)
				}
			}
			started := map[int]bool{}
			for _, r := range after {
				if r.Kind == loop.KindRoundStart {
					var s struct{ Round int }
					if err := json.Unmarshal([]byte(r.Body), &s); err != nil || started[s.Round] {
						t.Fatalf("round %d started twice (%v)", s.Round, err)
					}
					started[s.Round] = true
				}
			}
			if p.drive {
				if gates := g.drive(t); strings.Join(gates, " ") != "spec ticket-plan run" {
					t.Fatalf("the resumed loop waited at %v, want the run's three gates", gates)
				}
			}
		})
	}
}

// runStages reads run id's own ledger: the stages it started and completed, in order, and
// how many times it started again a stage whose attempt a crash left unfinished (its own
// recovery; such a restart is not a second advance, and is not in started).
func runStages(t *testing.T, home, id string) (started, completed []string, restarts int) {
	t.Helper()
	open := ""
	_, _, err := ledger.OpenReadOnly(filepath.Join(home, "runs", id), ledger.Options{Visit: func(r ledger.Record) error {
		if r.Kind != "stage.started" && r.Kind != "stage.completed" {
			return nil
		}
		var b struct{ Stage string }
		if err := json.Unmarshal(r.Body, &b); err != nil {
			return err
		}
		switch {
		case r.Kind == "stage.completed":
			completed, open = append(completed, b.Stage), ""
		case b.Stage == open:
			restarts++
		default:
			started, open = append(started, b.Stage), b.Stage
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return started, completed, restarts
}

type loopRecord struct{ Kind, Body string }

func loopRecords(t *testing.T, home, id string) []loopRecord {
	t.Helper()
	var out []loopRecord
	_, _, err := ledger.OpenReadOnly(filepath.Join(home, "loops", id), ledger.Options{Visit: func(r ledger.Record) error {
		out = append(out, loopRecord{r.Kind, string(r.Body)})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
