package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

func researchModel(string, ModelPolicy) (llm.Model, error) {
	return script.Parse([]byte(researchScenario), "scenario.yaml")
}

func crashEnv(home string) Env {
	return Env{Home: home, Harness: Harness{Version: "v1", BinaryDigest: "sha256:" + strings.Repeat("a", 64)},
		Workflow: DeliveryWorkflow(), Agents: testAgents(home, researchModel)}
}

func sigkill() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// TestResumeCrashChild is the crash test's child: it runs Next for the Research stage and
// SIGKILLs itself at REIN_RUN_CRASH_AT (hook:NAME, or write:N[:after] for the N-th write
// to the stage session's ledger).
func TestResumeCrashChild(t *testing.T) {
	home := os.Getenv("REIN_RUN_CRASH_HOME")
	if home == "" {
		t.Skip("runs only as the resume crash test's child process")
	}
	env := installCrash(crashEnv(home), os.Getenv("REIN_RUN_CRASH_AT"))
	if _, err := Next(context.Background(), env, os.Getenv("REIN_RUN_CRASH_ID")); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterCrash SIGKILLs a child running the Research stage at points before, inside
// and after its stage session, then resumes: the stage ends completed exactly once, with one
// accepted artifact and one accepted attempt, and settling again changes nothing.
func TestResumeAfterCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	points := []string{"hook:session", "write:1", "write:2:after", "write:4", "write:6:after", "write:8",
		"hook:artifact", "hook:attempt"}
	for _, at := range points {
		t.Run(strings.ReplaceAll(at, ":", "_"), func(t *testing.T) {
			env0, id := startRun(t)
			env := crashEnv(env0.Home)
			cmd := exec.Command(os.Args[0], "-test.run=^TestResumeCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "REIN_RUN_CRASH_HOME="+env.Home, "REIN_RUN_CRASH_ID="+id, "REIN_RUN_CRASH_AT="+at)
			out, err := cmd.CombinedOutput()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed at %s: %v\n%s", at, err, out)
			}
			res, err := Resume(context.Background(), env, id)
			if err != nil || res.Stage != StageResearch {
				t.Fatalf("Resume = %+v, %v", res, err)
			}
			// Recovery a second time changes nothing.
			settleTwice(t, env, id)
			ledgerPath := filepath.Join(env.Home, "runs", id, ledger.FileName)
			settled, err := os.ReadFile(ledgerPath)
			if err != nil {
				t.Fatal(err)
			}
			r, l, err := openRun(env.Home, id)
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			rep, err := Status(env, id)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Stage != StageSpecification || rep.Stages[0].State != "completed" {
				t.Fatalf("report = %+v", rep)
			}
			accepted := 0
			for i, a := range rep.Stages[0].Attempts {
				if a.Attempt != i+1 {
					t.Fatalf("attempts %+v", rep.Stages[0].Attempts)
				}
				if a.Outcome == "accepted" {
					accepted++
				}
			}
			if accepted != 1 || rep.Stages[0].Attempts[len(rep.Stages[0].Attempts)-1].Outcome != "accepted" {
				t.Fatalf("attempts %+v", rep.Stages[0].Attempts)
			}
			if n := bytes.Count(settled, []byte(`"stage":"research","attempt"`)); n == 0 {
				t.Fatal("no research records")
			}
			completed := 0
			for rec, err := range mustReadLedger(t, filepath.Dir(ledgerPath)) {
				if err != nil {
					t.Fatal(err)
				}
				if rec.Kind == KindStageCompleted && bytes.Contains(rec.Body, []byte(`"stage":"research"`)) {
					completed++
				}
			}
			if completed != 1 {
				t.Fatalf("research completed %d times", completed)
			}
			arts, _ := filepath.Glob(filepath.Join(r.Project, filepath.FromSlash(RunsDir), id, "research*.md"))
			if len(arts) != 1 {
				t.Fatalf("research artifacts %v", arts)
			}
			t.Logf("%s: attempts %d", at, len(rep.Stages[0].Attempts))
		})
	}
}

func mustReadLedger(t *testing.T, dir string) func(func(ledger.Record, error) bool) {
	t.Helper()
	l, _, err := ledger.OpenReadOnly(dir, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Records()
}

// TestResumeUnknownOutcome: an artifact whose contract the session contradicts is no proof
// either way; resume blocks with unknown_outcome and retries nothing.
func TestResumeUnknownOutcome(t *testing.T) {
	env0, id := startRun(t)
	env := crashEnv(env0.Home)
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ledger.Entry{Kind: KindStageStarted, Body: stageBody{Stage: StageResearch, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// A research.md that is not a valid contract, and no session.
	write(t, filepath.Join(r.Project, filepath.FromSlash(RunsDir), id, "research.md"), "---\nid: research\n---\n# Research\n\n```json\n{\"stage\":\"research\"}\n```\n")
	_, err = Resume(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Blockers) != 1 || be.Blockers[0].Code != BlockUnknownOutcome {
		t.Fatalf("Resume err = %v", err)
	}
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrBlocked) {
		t.Fatalf("Next after unknown_outcome = %v", err)
	}
}
