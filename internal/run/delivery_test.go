package run

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

const fakeToken = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"

func goodFiles() map[string]map[string]string {
	return map[string]map[string]string{"t1": {"t1.txt": "one " + fakeToken + "\n"}, "t2": {"t2.txt": "two\n"}}
}

func TestDeliveryThroughRunGate(t *testing.T) {
	d := newDeliveryRun(t, goodFiles())
	if rep := d.status(t); rep.Stage != StageManualIntegration || rep.State != StateReady {
		t.Fatalf("status = %s %s", rep.Stage, rep.State)
	}
	project := gitRun(t, d.project, "status", "--porcelain")
	d.mustNext(t, StageManualIntegration)
	in := d.status(t).Delivery
	if in == nil || len(in.Merges) != 2 || in.Merges[0].Ticket != "t1" || in.Merges[1].Ticket != "t2" || in.Head != d.branchHead(t) || in.Base != d.base {
		t.Fatalf("integration = %+v", in)
	}
	// Dependency order: t2's merge is made onto t1's.
	if p := gitRun(t, d.project, "log", "-1", "--format=%P", in.Merges[1].Merge); p != in.Merges[0].Merge+" "+d.tickets["t2"].Candidate.Head {
		t.Errorf("t2's merge parents = %s", p)
	}
	if got := gitRun(t, d.project, "status", "--porcelain"); got != project {
		t.Errorf("the project's checkout changed: %q", got)
	}
	d.mustNext(t, StageReconciliation)
	d.mustNext(t, StageFinalChecklist)
	d.mustNext(t, StageFullVerification)
	rep := d.status(t)
	if rep.State != StateWaitingForHuman || rep.Waiting == nil || rep.Waiting.Gate != GateRun || rep.Waiting.Digest == "" {
		t.Fatalf("at the run gate: %s %+v", rep.State, rep.Waiting)
	}
	for _, name := range []string{"full-verification.md", "final-checklist.md", "delivery-summary.md"} {
		if _, err := ViewArtifact(d.env, d.id, name); err != nil {
			t.Errorf("show %s: %v", name, err)
		}
	}
	data := readProjectFile(t, d.project, RunsDir+"/"+d.id+"/full-verification.md")
	if strings.Contains(data, fakeToken) || !strings.Contains(data, "[REDACTED:") || !strings.Contains(data, `"exitCode": 0`) {
		t.Errorf("full verification artifact:\n%s", data)
	}
	if _, err := ApproveGate(d.env, d.id, GateRun, artifact.Digest("sha256:"+strings.Repeat("0", 64)), "ana"); !errors.Is(err, ErrGateDigest) {
		t.Fatalf("approve with another digest: %v", err)
	}
	if _, err := RejectGate(d.env, d.id, GateRun, "no", "ana"); !errors.Is(err, ErrUsage) {
		t.Fatalf("reject the run gate: %v", err)
	}
	if _, err := ApproveGate(d.env, d.id, GateRun, artifact.Digest(rep.Waiting.Digest), "ana"); err != nil {
		t.Fatal(err)
	}
	rep = d.status(t)
	if rep.State != StateCompleted || rep.Stage != StageDeliveryReady || !rep.Delivery.Ready {
		t.Fatalf("after the run gate: %s %s %+v", rep.State, rep.Stage, rep.Delivery)
	}
	if _, err := d.next(t); !errors.Is(err, ErrFinished) || !strings.Contains(err.Error(), d.branchHead(t)) {
		t.Errorf("next after Delivery Ready: %v", err)
	}
	if a, err := Audit(context.Background(), d.env, d.id); err != nil || !a.Passed || len(a.Checks) != 8 {
		t.Fatalf("audit = %+v, %v", a, err)
	}
}

func TestIntegrationConflictWaitsAndResumes(t *testing.T) {
	d := newIndependentDeliveryRun(t, map[string]map[string]string{"t1": {"t1.txt": "one\n", "t2.txt": "from t1\n"}, "t2": {"t2.txt": "from t2\n"}})
	refs := gitRun(t, d.project, "for-each-ref")
	_, err := d.next(t)
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrBlocked) || ce.Conflict.Ticket != "t2" || !slices.Equal(ce.Conflict.Files, []string{"t2.txt"}) {
		t.Fatalf("Next = %v", err)
	}
	if got := gitRun(t, d.project, "for-each-ref"); got != refs {
		t.Errorf("refs changed on a conflict:\n%s", got)
	}
	rep := d.status(t)
	if rep.State != StateWaitingForHuman || rep.Waiting.Kind != "integration" || rep.Waiting.Ticket != "t2" || !slices.Contains(rep.Waiting.Commands, "rein run resume "+d.id) {
		t.Fatalf("status = %s %+v", rep.State, rep.Waiting)
	}
	if _, err := d.next(t); !errors.As(err, &ce) {
		t.Fatalf("next while waiting: %v", err)
	}
	// A person resolves it on the branch by hand, then resumes.
	wt := t.TempDir() + "/resolve"
	gitRun(t, d.project, "worktree", "add", "-q", wt, d.branch)
	gitRun(t, wt, "merge", "-q", "--no-edit", d.tickets["t1"].Candidate.Head)
	if _, err := gitRunErr(wt, "merge", "-q", "--no-edit", d.tickets["t2"].Candidate.Head); err == nil {
		t.Fatal("the hand merge did not conflict")
	}
	write(t, wt+"/t2.txt", "both\n")
	gitRun(t, wt, "add", "t2.txt")
	gitRun(t, wt, "commit", "-q", "--no-edit")
	resolved := gitRun(t, wt, "rev-parse", "HEAD")
	gitRun(t, d.project, "worktree", "remove", wt)
	res, err := Resume(context.Background(), d.env, d.id)
	if err != nil || res.Stage != StageManualIntegration {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	rep = d.status(t)
	if rep.Stage != StageReconciliation || rep.Delivery.Head != resolved || !slices.Contains(rep.Delivery.Resolution, resolved) || rep.Delivery.Merges[1].Merge != resolved {
		t.Fatalf("after resolution: %s %+v", rep.Stage, rep.Delivery)
	}
	d.mustNext(t, StageReconciliation)
}

func gitRunErr(dir string, args ...string) (string, error) {
	return git(dir, append([]string{"-c", "user.name=p", "-c", "user.email=p@e", "-c", "commit.gpgSign=false"}, args...)...)
}

func TestReconciliationFindsForeignCommit(t *testing.T) {
	d := newDeliveryRun(t, goodFiles())
	d.mustNext(t, StageManualIntegration)
	head := d.branchHead(t)
	tree := gitRun(t, d.project, "rev-parse", head+"^{tree}")
	foreign := gitRun(t, d.project, "commit-tree", "-p", head, "-m", "sneaky", tree)
	gitRun(t, d.project, "update-ref", "refs/heads/"+d.branch, foreign)
	_, err := d.next(t)
	codes := blockerCodes(err)
	if len(codes) != 1 || !strings.HasPrefix(codes[0], BlockForeignCommit) || !strings.Contains(codes[0], foreign) {
		t.Fatalf("Next = %v", err)
	}
	if rep := d.status(t); rep.State != StateBlocked {
		t.Errorf("state = %s", rep.State)
	}
	gitRun(t, d.project, "update-ref", "refs/heads/"+d.branch, head)
	d.mustNext(t, StageReconciliation)
}

func TestChecklistNamesUncovered(t *testing.T) {
	d := newDeliveryRun(t, goodFiles())
	r, l, err := openRunMode(d.env.Home, d.id, true)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, spec, err := r.approvedSpec()
	if err != nil {
		t.Fatal(err)
	}
	_, plan, err := r.approvedPlan()
	if err != nil {
		t.Fatal(err)
	}
	plan.Tickets = plan.Tickets[:1]
	_, bs := r.traceability("", spec, "", plan)
	if len(bs) != 1 || bs[0].Code != BlockChecklistUncovered || !strings.HasSuffix(bs[0].Detail, ": a1") {
		t.Fatalf("blockers = %+v", bs)
	}
}

func TestChecklistRefusesUnverifiedTicket(t *testing.T) {
	d := newDeliveryRun(t, goodFiles())
	d.accept(t, "t2", map[string]string{"t2.txt": "again\n"}, false) // t2 re-accepted with a failing verification
	d.mustNext(t, StageManualIntegration)
	d.mustNext(t, StageReconciliation)
	_, err := d.next(t)
	codes := blockerCodes(err)
	if len(codes) != 1 || !strings.HasPrefix(codes[0], BlockChecklistUnverified) || !strings.HasSuffix(codes[0], ": t2") {
		t.Fatalf("Next = %v", err)
	}
}

func TestFullVerificationFailureBlocks(t *testing.T) {
	d := newDeliveryRun(t, map[string]map[string]string{"t1": {"t1.txt": "one\n"}, "t2": {"other.txt": "no t2.txt\n"}})
	for _, s := range []string{StageManualIntegration, StageReconciliation, StageFinalChecklist} {
		d.mustNext(t, s)
	}
	_, err := d.next(t)
	codes := blockerCodes(err)
	if len(codes) != 1 || !strings.HasPrefix(codes[0], BlockFullVerificationFailed) || !strings.Contains(codes[0], "files (exit 1)") {
		t.Fatalf("Next = %v", err)
	}
	rep := d.status(t)
	if rep.State != StateBlocked || rep.Stage != StageFullVerification {
		t.Fatalf("status = %s %s", rep.State, rep.Stage)
	}
	data := readProjectFile(t, d.project, RunsDir+"/"+d.id+"/full-verification.md")
	if !strings.Contains(data, `"id": "files"`) || !strings.Contains(data, `"exitCode": 1`) || strings.Contains(data, `"id": "never"`) {
		t.Errorf("artifact:\n%s", data)
	}
}
