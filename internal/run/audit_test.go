package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAuditAtTicketPlanGate(t *testing.T) {
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, workflowModel)
	advanceTo(t, env, id, StageTicketPlanGate, nil)
	approveOpenGate(t, env, id, GateTicketPlan)
	rep, err := Audit(context.Background(), env, id)
	if err != nil || !rep.Passed {
		t.Fatalf("audit = %+v, %v", rep, err)
	}
	for _, c := range rep.Checks {
		if want := map[string]int{AuditSessionsFresh: 3, AuditApprovalsBound: 2, AuditSameLock: 1}[c.Name]; want != 0 && c.Checked != want {
			t.Errorf("%s checked %d, want %d", c.Name, c.Checked, want)
		}
	}
	// An approved artifact edited afterwards: the approval no longer binds it.
	spec := filepath.Join(projectOf(t, env, id), filepath.FromSlash(RunsDir), id, "spec.md")
	data, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(spec, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, spec, strings.Replace(string(data), "Do the thing.", "Do another thing.", 1))
	rep, err = Audit(context.Background(), env, id)
	var ae *AuditError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAuditFailed) || ae.First.Check != AuditApprovalsBound || !strings.Contains(ae.First.Subject, "gate spec") {
		t.Fatalf("audit of an edited approved spec: %v", err)
	}
	if rep == nil || rep.Passed {
		t.Fatal("the report says passed")
	}
}

func TestAuditNamesFirstViolation(t *testing.T) {
	d := newDeliveryRun(t, goodFiles())
	if _, err := Audit(context.Background(), d.env, d.id); err != nil {
		t.Fatalf("audit of a good run: %v", err)
	}
	// A review offered a mutating tool, recorded as the ticket loop records its attempts.
	d.appendRecord(t, KindStageAttempt, auditAttempt{Attempt: Attempt{Stage: auditReviewStage, Attempt: 1, Outcome: "accepted"}, Ticket: "t1", Tools: []string{"read", "write"}})
	var ae *AuditError
	if _, err := Audit(context.Background(), d.env, d.id); !errors.As(err, &ae) || ae.First.Check != AuditReviewReadOnly || !strings.Contains(ae.First.Detail, "write") {
		t.Fatalf("audit: %v", err)
	}
	// A review model equal to the writer's comes first.
	rec := d.tickets["t2"]
	rec.ReviewModel = rec.WriterModel
	d.appendRecord(t, KindTicketAccepted, rec)
	if _, err := Audit(context.Background(), d.env, d.id); !errors.As(err, &ae) || ae.First.Check != AuditModelsDistinct || ae.First.Subject != "ticket t2" {
		t.Fatalf("audit: %v", err)
	}
}

func TestAuditCandidateDigest(t *testing.T) {
	d := newDeliveryRun(t, goodFiles())
	rec := d.tickets["t1"]
	rec.Candidate.Head = d.tickets["t2"].Candidate.Head
	d.appendRecord(t, KindTicketAccepted, rec)
	var ae *AuditError
	if _, err := Audit(context.Background(), d.env, d.id); !errors.As(err, &ae) || ae.First.Check != AuditCandidatesFrozen || !strings.Contains(ae.First.Subject, "ticket t1") {
		t.Fatalf("audit: %v", err)
	}
}
