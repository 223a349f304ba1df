package run

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
)

// TestDecisionCrashChild is the decision crash test's child: it runs REIN_RUN_CRASH_OP (start
// or reject) and SIGKILLs itself at REIN_RUN_CRASH_AT.
func TestDecisionCrashChild(t *testing.T) {
	op := os.Getenv("REIN_RUN_CRASH_OP")
	if op == "" {
		t.Skip("runs only as the decision crash test's child process")
	}
	env := installCrash(workflowEnv(os.Getenv("REIN_RUN_CRASH_HOME")), os.Getenv("REIN_RUN_CRASH_AT"))
	var err error
	switch op {
	case "start":
		p := os.Getenv("REIN_RUN_CRASH_PROJECT")
		_, err = Start(env, StartOptions{Project: p, Requirement: filepath.Join(p, "req.md")})
	case "reject":
		_, err = RejectGate(env, os.Getenv("REIN_RUN_CRASH_ID"), GateSpec, "not this", "ana")
	case "clarify":
		_, err = Clarify(env, os.Getenv("REIN_RUN_CRASH_ID"), map[string]string{"u1": "the blue one"})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func crashChild(t *testing.T, vars ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDecisionCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), vars...)
	out, err := cmd.CombinedOutput()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed: %v\n%s", err, out)
	}
}

// settleTwice checks a second settlement finds nothing and leaves the run ledger as it is.
func settleTwice(t *testing.T, env Env, id string) {
	t.Helper()
	path := filepath.Join(env.Home, "runs", id, ledger.FileName)
	settled, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.reconcileAndRecord(env, l); err != nil {
		t.Fatal(err)
	}
	if s, err := r.settleDecisions(env, l); s != nil || err != nil {
		t.Fatalf("second settlement = %+v, %v", s, err)
	}
	if s, err := r.settleInterrupted(env, l); s != nil || err != nil {
		t.Fatalf("second settlement = %+v, %v", s, err)
	}
	l.Close()
	if again, _ := os.ReadFile(path); !bytes.Equal(settled, again) {
		t.Fatal("a second recovery changed the run ledger")
	}
}

func countKind(t *testing.T, env Env, id, kind, body string) int {
	t.Helper()
	n := 0
	for rec, err := range mustReadLedger(t, filepath.Join(env.Home, "runs", id)) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == kind && bytes.Contains(rec.Body, []byte(body)) {
			n++
		}
	}
	return n
}

// TestResumeAfterCrashPreflight SIGKILLs Start inside Preflight; resume runs Preflight again
// and completes it exactly once.
func TestResumeAfterCrashPreflight(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, at := range []string{"hook:preflight-lock", "hook:preflight-started"} {
		t.Run(strings.ReplaceAll(at, ":", "_"), func(t *testing.T) {
			env0, first := startRun(t)
			env := workflowEnv(env0.Home)
			rep, err := Status(env, first)
			if err != nil {
				t.Fatal(err)
			}
			crashChild(t, "REIN_RUN_CRASH_HOME="+env.Home, "REIN_RUN_CRASH_PROJECT="+rep.Project, "REIN_RUN_CRASH_AT="+at, "REIN_RUN_CRASH_OP=start")
			entries, _ := os.ReadDir(filepath.Join(env.Home, "runs"))
			id := ""
			for _, e := range entries {
				if e.Name() != first {
					id = e.Name()
				}
			}
			if id == "" {
				t.Fatal("the child left no run")
			}
			res, err := Resume(context.Background(), env, id)
			if err != nil || len(res.Settled) != 1 || res.Settled[0].Outcome != "passed" {
				t.Fatalf("Resume = %+v, %v", res, err)
			}
			settleTwice(t, env, id)
			if st, err := Status(env, id); err != nil || st.Stage != StageResearch {
				t.Fatalf("status = %+v, %v", st, err)
			}
			if n := countKind(t, env, id, KindStageCompleted, `"stage":"`+StagePreflight+`"`); n != 1 {
				t.Fatalf("preflight completed %d times", n)
			}
			if n := countKind(t, env, id, KindPreflight, ""); n != 1 {
				t.Fatalf("%d preflight records", n)
			}
		})
	}
}

// TestResumeAfterCrashReject SIGKILLs a Spec Gate rejection after its reason artifact; resume
// records the rejection exactly once.
func TestResumeAfterCrashReject(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	advanceTo(t, env, id, StageSpecGate, nil)
	crashChild(t, "REIN_RUN_CRASH_HOME="+env.Home, "REIN_RUN_CRASH_ID="+id, "REIN_RUN_CRASH_AT=hook:rejection", "REIN_RUN_CRASH_OP=reject")
	res, err := Resume(context.Background(), env, id)
	if err != nil || len(res.Settled) != 1 || res.Settled[0].Outcome != GateRejected {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	settleTwice(t, env, id)
	st, err := Status(env, id)
	if err != nil || st.Stage != StageSpecification {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if n := countKind(t, env, id, KindGateDecision, `"decision":"rejected"`); n != 1 {
		t.Fatalf("%d rejections", n)
	}
}
