package loop

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/system"
)

var loopCrashAll = flag.Bool("rein.loopcrash.all", false, "crash the loop at every point of rounds 1 and 2, every session write included (slow)")

// scriptEnv is a loop environment whose rounds run the script model of the loop's start.
func scriptEnv(home string) Env {
	agents := &system.Agents{Home: home, Getenv: func(string) string { return "" }, Retry: llm.RetryPolicy{MaxAttempts: 1}}
	agents.NewModel = func(_ string, m agentspec.Model) (llm.Model, error) { return script.Load(m.Script) }
	return Env{Home: home, Agents: agents}
}

func sigkill() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// installLoopCrash makes env kill the process at point at of round round: a named point
// (the round's hooks, or gate-action / gate-ran of an approval), or write:N[:after] for the
// N-th write to round's session ledger (mid-session).
func installLoopCrash(env Env, at string, round int) Env {
	p := strings.Split(at, ":")
	if p[0] == "write" {
		n, _ := strconv.Atoi(p[1])
		seen := 0
		dir := string(filepath.Separator) + filepath.Join("rounds", strconv.Itoa(round)) + string(filepath.Separator)
		env.SessionFS = &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(op ledgertest.Op) *ledgertest.Fault {
			if op.Kind != "write" || filepath.Base(op.Name) != ledger.FileName || !strings.Contains(op.Name, dir) {
				return nil
			}
			if seen++; seen != n {
				return nil
			}
			if len(p) > 2 {
				return &ledgertest.Fault{Written: op.Size, Before: sigkill}
			}
			return &ledgertest.Fault{Before: sigkill}
		}}
		return env
	}
	seen := 0
	env.Crash = func(name string) {
		if name != at {
			return
		}
		// A round's hooks run once per round; an approval's once per approval.
		if seen++; seen == round || strings.HasPrefix(at, "gate-") || at == "interrupted-verified" {
			sigkill()
		}
	}
	return env
}

// TestLoopCrashChild is the crash matrix's child: it runs the loop (or approves gate
// REIN_LOOP_CRASH_GATE) and SIGKILLs itself at REIN_LOOP_CRASH_AT of round
// REIN_LOOP_CRASH_ROUND.
func TestLoopCrashChild(t *testing.T) {
	home := os.Getenv("REIN_LOOP_CRASH_HOME")
	if home == "" {
		t.Skip("runs only as the loop crash matrix's child process")
	}
	round, _ := strconv.Atoi(os.Getenv("REIN_LOOP_CRASH_ROUND"))
	env := installLoopCrash(scriptEnv(home), os.Getenv("REIN_LOOP_CRASH_AT"), round)
	id := os.Getenv("REIN_LOOP_CRASH_ID")
	if g := os.Getenv("REIN_LOOP_CRASH_GATE"); g != "" {
		if _, err := Approve(context.Background(), env, id, g, "ana"); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := Run(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
}

// crashLoop is the crash matrix's loop: round 1's claim of done is contradicted, round 2's
// push is held at the human gate (its action appends to pushed.marker, so a second run of it
// shows), round 3 fixes the answer; spare rounds follow for a crash that shifts them.
func crashLoop(t *testing.T) (*fixture, string) {
	push := `[{name: bash, args: {command: "git push origin HEAD:refs/heads/main && echo pushed >> pushed.marker"}}]`
	f := newFixture(t, contractYAML(map[string]string{"failure": "same root cause fails 3 times in a row", "budget": "{rounds: 8}", "gate": "[push]"}),
		round{calls: write("answer.txt", "41"), claim: "done", report: "wrote the answer"},
		round{calls: push, claim: "progress", report: "pushed"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	remote := t.TempDir()
	git(t, remote, "init", "--bare", "-q")
	git(t, f.ws, "init", "-q")
	git(t, f.ws, "add", "check.sh")
	git(t, f.ws, "commit", "-qm", "start")
	git(t, f.ws, "remote", "add", "origin", remote)
	mustWrite(t, filepath.Join(f.ws, ".gitignore"), "pushed.marker\n")
	return f, f.start()
}

// finish runs the loop to its end as a person would: run, approve every gate it waits on, run.
func finish(t *testing.T, env Env, id string) *Report {
	t.Helper()
	for range 8 {
		state, err := Run(context.Background(), env, id)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if state != StateWaitingForHuman {
			rep, err := Status(env, id)
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		rep, _ := Status(env, id)
		for _, g := range rep.Gates {
			if _, err := Approve(context.Background(), env, id, g.ID, "ana"); err != nil {
				t.Fatalf("approve %s: %v", g.ID, err)
			}
		}
	}
	t.Fatal("the loop never finished")
	return nil
}

type rec struct {
	Seq  int64
	Kind string
	Body string
}

func records(t *testing.T, home, id string) []rec {
	t.Helper()
	var rs []rec
	_, _, err := ledger.OpenReadOnly(loopDir(home, id), ledger.Options{Visit: func(r ledger.Record) error {
		rs = append(rs, rec{r.Seq, r.Kind, string(r.Body)})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestCrashMatrixOverRoundBoundaries SIGKILLs a real process running the loop at every round
// boundary of round 2 (the gate's round) — before its start record, before its session,
// mid-session, before and after verification, after its checkpoint — and during the gate
// approval's action; then resumes as a person would. Resuming never runs a round twice against
// the same checkpoint, loses no recorded verification (what the crash left is a prefix of the
// ledger after), never runs the approved action twice, and ends completed as the uncrashed
// loop does. -rein.loopcrash.all adds round 1, every session write and a crash while a resume
// closes the interrupted round.
func TestCrashMatrixOverRoundBoundaries(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	f0, id0 := crashLoop(t)
	ref := finish(t, f0.env, id0)
	if ref.State != StateCompleted || ref.Reason != ReasonVerificationPassed {
		t.Fatalf("the uncrashed loop ended %s (%s)", ref.State, ref.Reason)
	}
	type point struct {
		at    string
		round int
	}
	points := []point{{"round-start", 2}, {"session", 2}, {"write:3", 2}, {"write:5:after", 2}, {"verify", 2}, {"verified", 2}, {"ended", 2}, {"gate-action", 2}, {"gate-ran", 2}}
	if *loopCrashAll {
		for _, r := range []int{1, 2} {
			for _, at := range []string{"round-start", "session", "verify", "verified", "ended"} {
				points = append(points, point{at, r})
			}
			for n := 1; n <= 10; n++ {
				points = append(points, point{"write:" + strconv.Itoa(n), r}, point{"write:" + strconv.Itoa(n) + ":after", r})
			}
		}
		points = append(points, point{"interrupted-verified", 2})
	}
	for _, p := range points {
		t.Run(fmt.Sprintf("round%d/%s", p.round, strings.ReplaceAll(p.at, ":", "_")), func(t *testing.T) {
			f, id := crashLoop(t)
			child := []string{"REIN_LOOP_CRASH_HOME=" + f.env.Home, "REIN_LOOP_CRASH_ID=" + id, "REIN_LOOP_CRASH_AT=" + p.at, "REIN_LOOP_CRASH_ROUND=" + strconv.Itoa(p.round)}
			switch {
			case strings.HasPrefix(p.at, "gate-"):
				if state, err := Run(context.Background(), f.env, id); err != nil || state != StateWaitingForHuman {
					t.Fatalf("run to the gate: %s, %v", state, err)
				}
				child = append(child, "REIN_LOOP_CRASH_GATE=g2-1")
			case p.at == "interrupted-verified": // crash in round 2's session, then again while resuming closes it
				kill(t, append(child[:2:2], "REIN_LOOP_CRASH_AT=session", "REIN_LOOP_CRASH_ROUND=2"), true)
			}
			kill(t, child, !*loopCrashAll || !strings.HasPrefix(p.at, "write:"))
			left := records(t, f.env.Home, id)
			rep := finish(t, f.env, id)
			if rep.State != ref.State || rep.Reason != ref.Reason {
				t.Fatalf("resumed loop ended %s (%s), the uncrashed one %s (%s)", rep.State, rep.Reason, ref.State, ref.Reason)
			}
			after := records(t, f.env.Home, id)
			for i, r := range left {
				if i >= len(after) || after[i] != r {
					t.Fatalf("record %d (%s) recorded before the resume is gone or changed after it", r.Seq, r.Kind)
				}
			}
			againstOnce(t, after)
			if data, err := os.ReadFile(filepath.Join(f.ws, "pushed.marker")); strings.Count(string(data), "pushed") > 1 || err == nil && p.at == "gate-action" {
				t.Fatalf("the approved action ran %d times (marker %q, %v)", strings.Count(string(data), "pushed"), data, err)
			}
			if p.at == "gate-ran" {
				if data, _ := os.ReadFile(filepath.Join(f.ws, "pushed.marker")); string(data) != "pushed\n" {
					t.Fatalf("the approved action, run before the crash, left %q", data)
				}
			}
		})
	}
}

// kill runs the crash child and, when must, requires that it died of SIGKILL.
func kill(t *testing.T, env []string, must bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoopCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if killed := err != nil && ws.Signaled() && ws.Signal() == syscall.SIGKILL; !killed && must {
		t.Fatalf("child was not killed (%v): %v\n%s", env, err, out)
	} else if !killed {
		t.Skipf("the crash point was never reached: %v\n%s", err, out)
	}
}

// againstOnce fails when two rounds started against the same checkpoint (the latest one
// recorded before each round.started), or when a round number repeats.
func againstOnce(t *testing.T, rs []rec) {
	t.Helper()
	latest := 0
	seen := map[int]int{}
	rounds := map[int]bool{}
	for _, r := range rs {
		switch r.Kind {
		case KindCheckpoint:
			var c Checkpoint
			if err := json.Unmarshal([]byte(r.Body), &c); err != nil {
				t.Fatal(err)
			}
			latest = c.Round
		case KindRoundStart:
			var s roundStart
			if err := json.Unmarshal([]byte(r.Body), &s); err != nil {
				t.Fatal(err)
			}
			if prev, ok := seen[latest]; ok {
				t.Fatalf("rounds %d and %d both started against round %d's checkpoint", prev, s.Round, latest)
			}
			if rounds[s.Round] {
				t.Fatalf("round %d started twice", s.Round)
			}
			seen[latest], rounds[s.Round] = s.Round, true
		}
	}
}
