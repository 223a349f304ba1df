package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

// TestDeliveryCrashChild is the post-ticket crash matrix's child: it runs `next` from Manual
// Integration up to the Run Acceptance gate, then approves the gate as `rein run approve
// --gate run` does, and SIGKILLs itself at REIN_RUN_CRASH_DELIVERY: "NAME#k" (the k-th call
// of the crash hook NAME), "write:N" or "write:N:after" (before, or after all its bytes
// reached the file, the N-th write to the run ledger, counted from the child's start), or
// "reported" (once the approval was reported recorded).
func TestDeliveryCrashChild(t *testing.T) {
	at := os.Getenv("REIN_RUN_CRASH_DELIVERY")
	if at == "" {
		t.Skip("runs only as the post-ticket crash test's child process")
	}
	env := crashEnv(os.Getenv("REIN_RUN_CRASH_HOME"))
	if n, after, ok := writePoint(at); ok {
		env.RunFS = runLedgerFaults(func(w int) *ledgertest.Fault {
			switch {
			case w != n:
				return nil
			case after:
				return &ledgertest.Fault{Written: -1, Before: sigkill}
			}
			return &ledgertest.Fault{Before: sigkill}
		})
	} else if name, k, ok := strings.Cut(at, "#"); ok {
		want, _ := strconv.Atoi(k)
		seen := 0
		env.Crash = func(point string) {
			if point == name {
				if seen++; seen == want {
					sigkill()
				}
			}
		}
	}
	id := os.Getenv("REIN_RUN_CRASH_ID")
	if _, err := approveRunGate(t, env, id); err != nil {
		t.Fatal(err)
	}
	if at == "reported" {
		sigkill()
	}
}

// writePoint parses "write:N[:after]".
func writePoint(at string) (n int, after, ok bool) {
	p := strings.Split(at, ":")
	if p[0] != "write" || len(p) < 2 {
		return 0, false, false
	}
	n, err := strconv.Atoi(p[1])
	return n, len(p) > 2 && p[2] == "after", err == nil
}

// runLedgerFaults is a run ledger filesystem that asks fault about the w-th write to the
// ledger file (1-based); Written -1 stands for every byte of that write.
func runLedgerFaults(fault func(w int) *ledgertest.Fault) *ledgertest.FaultFS {
	seen := 0
	return &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(op ledgertest.Op) *ledgertest.Fault {
		if op.Kind != "write" || filepath.Base(op.Name) != ledger.FileName {
			return nil
		}
		seen++
		f := fault(seen)
		if f != nil && f.Written < 0 {
			f.Written = op.Size
		}
		return f
	}}
}

// approveRunGate runs next until the run waits at the Run Acceptance gate and approves the
// summary awaiting it; it returns what the gate waited for.
func approveRunGate(t *testing.T, env Env, id string) (*Waiting, error) {
	t.Helper()
	for range 6 {
		rep, err := Status(env, id)
		if err != nil {
			return nil, err
		}
		if w := rep.Waiting; w != nil && w.Gate == GateRun {
			_, err := ApproveGate(env, id, GateRun, artifact.Digest(w.Digest), "ana")
			return w, err
		}
		if _, err := Next(context.Background(), env, id); err != nil {
			return nil, fmt.Errorf("next at %s: %w", rep.Stage, err)
		}
	}
	return nil, fmt.Errorf("run %s never waited at the Run Acceptance gate", id)
}

// toDeliveryReady runs next (or resume first) until the run waits at the Run Acceptance gate,
// then approves it (approved says it had to), or until it is Delivery Ready; the run must end
// Delivery Ready.
func toDeliveryReady(t *testing.T, env Env, id string, resume bool) (rep *Report, approved bool) {
	t.Helper()
	if resume {
		_, err := Resume(context.Background(), env, id)
		rep, _ := Status(env, id)
		switch {
		case err == nil:
		case errors.Is(err, ErrNotRunnable) && rep != nil && rep.Waiting != nil && rep.Waiting.Gate == GateRun:
			// An approval that never reached the ledger is asked for again: resume stops there.
		case errors.Is(err, ErrFinished) && rep != nil && rep.Delivery != nil && rep.Delivery.Ready:
			// The crash came after the approval was reported: nothing was left to do.
		default:
			t.Fatalf("Resume: %v", err)
		}
	}
	for range 6 {
		rep, err := Status(env, id)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Delivery != nil && rep.Delivery.Ready {
			break
		}
		if rep.Waiting != nil && rep.Waiting.Gate == GateRun {
			if _, err := ApproveGate(env, id, GateRun, artifact.Digest(rep.Waiting.Digest), "ana"); err != nil {
				t.Fatal(err)
			}
			approved = true
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
	return rep, approved
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

// cleanDelivery takes an uncrashed run to Delivery Ready as the child does, counting the run
// ledger's writes: before the approval (next … up to the gate) and the approval's own.
func cleanDelivery(t *testing.T) (shape string, before, approval int) {
	t.Helper()
	d := newDeliveryRun(t, goodFiles())
	writes := 0
	env := d.env
	env.RunFS = runLedgerFaults(func(w int) *ledgertest.Fault { writes = w; return nil })
	if _, err := approveRunGate(t, gateCounter(env, &before, &writes), d.id); err != nil {
		t.Fatal(err)
	}
	approval = writes - before
	rep, approved := toDeliveryReady(t, d.env, d.id, false)
	if approved {
		t.Fatal("the uncrashed run asked for a second approval")
	}
	return deliveryShape(t, d, rep), before, approval
}

// gateCounter notes in *before the run ledger writes made up to the approval (the crash hook
// "approval" runs once its gate.decision is written: one write less than before the call).
func gateCounter(env Env, before, writes *int) Env {
	env.Crash = func(point string) {
		if point == "approval" {
			*before = *writes - 1
		}
	}
	return env
}

// TestResumeAfterCrashDelivery SIGKILLs a child running the stages after the tickets —
// Manual Integration (after the branch moved), Reconciliation, Final Checklist, Full Run
// Verification (each as its check starts), the delivery summary, the Run Acceptance approval
// (before and after its gate.decision record reaches the run ledger, between that record and
// its stage.completed, before Delivery Ready, after the approval was reported) and the first
// run ledger writes — then resumes: the run ends Delivery Ready with the same commits and tree
// as an uncrashed run (no duplicated or lost merge, no half-merged tree), both tickets'
// acceptances intact, the approval recorded exactly once (asked for again only when its
// record never reached the ledger, never after), and a second recovery changes nothing.
// -rein.crash.all adds every check of the three and every run ledger write.
func TestResumeAfterCrashDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	want, before, approval := cleanDelivery(t)
	if strings.Count(want, "rein: ") != 4 { // two candidates, two merges
		t.Fatalf("the uncrashed delivery:\n%s", want)
	}
	if approval != 3 { // gate.decision, stage.completed, delivery.ready
		t.Fatalf("the approval made %d run ledger writes, want 3", approval)
	}
	decision := before + 1
	w := func(n int, after string) string { return "write:" + strconv.Itoa(n) + after }
	points := []string{"integrated#1", "check#2", "summary#1", "write:1", "write:2:after",
		w(decision, ""), w(decision, ":after"), "approval#1", w(decision+1, ""), w(decision+2, ""), "reported"}
	if *crashAllPoints {
		points = []string{"integrated#1", "check#1", "check#3", "approval#1", "reported"}
		for n := 1; n <= before+approval; n++ {
			points = append(points, w(n, ""), w(n, ":after"))
		}
	}
	for _, at := range points {
		t.Run(strings.NewReplacer("#", "_", ":", "_").Replace(at), func(t *testing.T) {
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
			recorded := runApprovals(t, d) == 1
			if rep, err := Status(d.env, d.id); err == nil && recorded && rep.Stage == StageRunAcceptance {
				// Approving again before resume is refused: the approval is never recorded twice.
				if rep.State != StateInterrupted {
					t.Fatalf("a recorded approval without its completion: state %s, want %s", rep.State, StateInterrupted)
				}
				if _, err := ApproveGate(d.env, d.id, GateRun, artifact.Digest(rep.Delivery.Summary), "bob"); !errors.Is(err, ErrNotRunnable) || !strings.Contains(err.Error(), "rein run resume") {
					t.Fatalf("a second approval: %v", err)
				}
			}
			rep, approved := toDeliveryReady(t, d.env, d.id, true)
			if got := deliveryShape(t, d, rep); got != want {
				t.Fatalf("after the crash at %s the delivery differs:\n%s\nwant:\n%s", at, got, want)
			}
			if approved == recorded {
				t.Fatalf("after the crash at %s: the approval was recorded %v, asked for again %v", at, recorded, approved)
			}
			if wantRecorded := approvalRecordedAt(at, decision); recorded != wantRecorded {
				t.Fatalf("the crash at %s left the approval recorded %v, want %v", at, recorded, wantRecorded)
			}
			if n := runApprovals(t, d); n != 1 {
				t.Fatalf("%d run gate approvals after the crash at %s, want 1", n, at)
			}
			if n := countRecords(t, d, KindTicketAccepted); n != 2 {
				t.Fatalf("%d ticket acceptances after the crash, want 2", n)
			}
			settleTwice(t, d.env, d.id)
		})
	}
}

// approvalRecordedAt says whether a crash at point leaves the run gate's approval recorded:
// from the hook after its gate.decision record, once that write's bytes are in the file, and
// for every later point.
func approvalRecordedAt(point string, decision int) bool {
	if n, after, ok := writePoint(point); ok {
		return n > decision || n == decision && after
	}
	return point == "approval#1" || point == "reported"
}

// runApprovals counts the run gate's approvals in d's run ledger.
func runApprovals(t *testing.T, d *deliveryRun) int {
	t.Helper()
	r, l, err := openRunMode(d.env.Home, d.id, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := 0
	for _, g := range r.Gates[GateRun] {
		if g.Decision == GateApproved {
			n++
		}
	}
	return n
}

// countRecords counts d's run ledger records of kind.
func countRecords(t *testing.T, d *deliveryRun, kind string) int {
	t.Helper()
	n := 0
	for rec, err := range mustReadLedger(t, d.env.Home+"/runs/"+d.id) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == kind {
			n++
		}
	}
	return n
}
