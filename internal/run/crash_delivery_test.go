package run

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

// TestDeliveryCrashChild is the post-ticket crash matrix's child: it runs `next` from Manual
// Integration up to the Run Acceptance gate and SIGKILLs itself at the k-th call of the crash
// hook REIN_RUN_CRASH_AT ("NAME#k").
func TestDeliveryCrashChild(t *testing.T) {
	at := os.Getenv("REIN_RUN_CRASH_DELIVERY")
	if at == "" {
		t.Skip("runs only as the post-ticket crash test's child process")
	}
	name, k, _ := strings.Cut(at, "#")
	want, _ := strconv.Atoi(k)
	env := crashEnv(os.Getenv("REIN_RUN_CRASH_HOME"))
	seen := 0
	env.Crash = func(point string) {
		if point == name {
			if seen++; seen == want {
				sigkill()
			}
		}
	}
	id := os.Getenv("REIN_RUN_CRASH_ID")
	for range 6 {
		if _, err := Next(context.Background(), env, id); err != nil {
			t.Fatal(err)
		}
	}
}

// toDeliveryReady runs next (or resume first) until the run waits at the Run Acceptance gate, then
// approves it; the run must end Delivery Ready.
func toDeliveryReady(t *testing.T, env Env, id string, resume bool) *Report {
	t.Helper()
	if resume {
		if _, err := Resume(context.Background(), env, id); err != nil {
			t.Fatalf("Resume: %v", err)
		}
	}
	for range 6 {
		rep, err := Status(env, id)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Waiting != nil && rep.Waiting.Gate == GateRun {
			if _, err := ApproveGate(env, id, GateRun, artifact.Digest(rep.Waiting.Digest), "ana"); err != nil {
				t.Fatal(err)
			}
			break
		}
		if _, err := Next(context.Background(), env, id); err != nil {
			t.Fatalf("Next at %s: %v", rep.Stage, err)
		}
	}
	rep, err := Status(env, id)
	if err != nil || rep.State != StateCompleted || rep.Stage != StageDeliveryReady || rep.Delivery == nil || !rep.Delivery.Ready {
		t.Fatalf("not Delivery Ready: %+v, %v", rep, err)
	}
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrFinished) {
		t.Fatalf("next after Delivery Ready: %v", err)
	}
	return rep
}

// deliveryShape is what must not differ between a crashed and an uncrashed run: the commits
// from the base to the delivered head (subjects, in order), the delivered tree, and a clean
// project checkout.
func deliveryShape(t *testing.T, d *deliveryRun, rep *Report) string {
	t.Helper()
	head := d.branchHead(t)
	if rep.Delivery.Head != head {
		t.Fatalf("Delivery Ready records %s, the branch is at %s", rep.Delivery.Head, head)
	}
	log := gitRun(t, d.project, "log", "--format=%s", "--topo-order", d.base+".."+head)
	tree := gitRun(t, d.project, "rev-parse", head+"^{tree}")
	return strings.ReplaceAll(log, d.id, "RUN") + "\ntree " + tree
}

// TestResumeAfterCrashDelivery SIGKILLs a child running the stages after the tickets —
// Manual Integration (after the branch moved), Reconciliation, Final Checklist, Full Run
// Verification (each as its check starts), the delivery summary — then resumes: the run ends
// Delivery Ready with the same commits and tree as an uncrashed run (no duplicated or lost
// merge, no half-merged tree), both tickets' acceptances intact, and a second recovery
// changes nothing. -rein.crash.all adds every check of the three.
func TestResumeAfterCrashDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	clean := newDeliveryRun(t, goodFiles())
	want := deliveryShape(t, clean, toDeliveryReady(t, clean.env, clean.id, false))
	if strings.Count(want, "rein: ") != 4 { // two candidates, two merges
		t.Fatalf("the uncrashed delivery:\n%s", want)
	}
	points := []string{"integrated#1", "check#2", "summary#1"}
	if *crashAllPoints {
		points = []string{"integrated#1", "check#1", "check#2", "check#3", "summary#1"}
	}
	for _, at := range points {
		t.Run(strings.ReplaceAll(at, "#", "_"), func(t *testing.T) {
			d := newDeliveryRun(t, goodFiles())
			cmd := exec.Command(os.Args[0], "-test.run=^TestDeliveryCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "REIN_RUN_CRASH_HOME="+d.env.Home, "REIN_RUN_CRASH_ID="+d.id, "REIN_RUN_CRASH_DELIVERY="+at)
			out, err := cmd.CombinedOutput()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed at %s: %v\n%s", at, err, out)
			}
			if st := gitRun(t, d.project, "status", "--porcelain", "--untracked-files=no"); st != "" {
				t.Fatalf("the crash left the project's checkout changed: %q", st)
			}
			rep := toDeliveryReady(t, d.env, d.id, true)
			if got := deliveryShape(t, d, rep); got != want {
				t.Fatalf("after the crash at %s the delivery differs:\n%s\nwant:\n%s", at, got, want)
			}
			accepted := 0
			for rec, err := range mustReadLedger(t, d.env.Home+"/runs/"+d.id) {
				if err != nil {
					t.Fatal(err)
				}
				if rec.Kind == KindTicketAccepted {
					accepted++
				}
			}
			if accepted != 2 {
				t.Fatalf("%d ticket acceptances after the crash, want 2", accepted)
			}
			settleTwice(t, d.env, d.id)
		})
	}
}
