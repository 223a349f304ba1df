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
	rec.Candidate.Digest = d.tickets["t2"].Candidate.Digest
	d.appendRecord(t, KindTicketAccepted, rec)
	var ae *AuditError
	if _, err := Audit(context.Background(), d.env, d.id); !errors.As(err, &ae) || ae.First.Check != AuditCandidatesFrozen || !strings.Contains(ae.First.Subject, "ticket t1") {
		t.Fatalf("audit: %v", err)
	}
	// Another commit under t1's candidate: its diff from t1's start is not the recorded one
	// (ticket_starts, first), nor is its digest (candidates_frozen).
	rec = d.tickets["t1"]
	rec.Candidate.Head = d.tickets["t2"].Candidate.Head
	d.appendRecord(t, KindTicketAccepted, rec)
	rep, err := Audit(context.Background(), d.env, d.id)
	if !errors.As(err, &ae) || ae.First.Check != AuditTicketStarts || !strings.Contains(ae.First.Detail, "is not the diff from its start") {
		t.Fatalf("audit: %v", err)
	}
	if c := auditCheck(t, rep, AuditCandidatesFrozen); c.Passed {
		t.Fatalf("%s passed with t2's commit under t1's candidate", AuditCandidatesFrozen)
	}
}

// TestAuditTicketStarts: the audit computes each accepted ticket's start again (t2 starts
// from t1's accepted candidate) and fails, naming the ticket, when a ticket.start record or a
// candidate's base disagrees with it, or a start is recorded for a ticket the plan lacks.
func TestAuditTicketStarts(t *testing.T) {
	d := newDeliveryRun(t, goodFiles())
	rep, err := Audit(context.Background(), d.env, d.id)
	if err != nil {
		t.Fatalf("audit of a good run: %v", err)
	}
	if c := auditCheck(t, rep, AuditTicketStarts); !c.Passed || c.Checked != 2 {
		t.Fatalf("%s = %+v, want passed with 2 checked", AuditTicketStarts, c)
	}
	if len(rep.Checks) != 8 || rep.Checks[4].Name != AuditTicketStarts || rep.Checks[5].Name != AuditCandidatesFrozen {
		t.Fatalf("checks = %+v", rep.Checks)
	}
	t1, t2 := d.tickets["t1"], d.tickets["t2"]

	// t2's start record says it started from the run's base, not from t1's candidate.
	forged := TicketStart{Ticket: "t2", Base: d.base, DependsOn: []StartDep{}, Start: d.base}
	d.appendRecord(t, KindTicketStart, forged)
	wantStartViolation(t, d, "ticket t2", "its ticket.start record names start "+d.base)
	d.appendRecord(t, KindTicketStart, TicketStart{Ticket: "t2", Base: d.base, DependsOn: []StartDep{{Ticket: "t1", Commit: t1.Candidate.Head}}, Start: t2.Base})
	if _, err := Audit(context.Background(), d.env, d.id); err != nil {
		t.Fatalf("audit with t2's start restored: %v", err)
	}

	// t1's candidate names another base than its start (t2's commit).
	moved := t1
	moved.Base = t2.Candidate.Head
	d.appendRecord(t, KindTicketAccepted, moved)
	ae := wantStartViolation(t, d, "ticket t1", "names base "+t2.Candidate.Head+", not its recorded start "+d.base)
	if ae.Count < 2 {
		t.Fatalf("the moved base should also fail candidates_frozen: %+v", ae)
	}
	d.appendRecord(t, KindTicketAccepted, t1)

	// A candidate whose commit does not descend from its start (t2 claims the run's base).
	stolen := t2
	stolen.Candidate.Head = d.base
	d.appendRecord(t, KindTicketAccepted, stolen)
	wantStartViolation(t, d, "ticket t2", "does not descend from its recorded start")
	d.appendRecord(t, KindTicketAccepted, t2)

	// A start for a ticket the approved plan does not have.
	d.appendRecord(t, KindTicketStart, TicketStart{Ticket: "t9", Base: d.base, DependsOn: []StartDep{}, Start: d.base})
	wantStartViolation(t, d, "ticket t9", "the approved ticket plan has no such ticket")
}

// wantStartViolation audits d and wants ticket_starts's violation of subject first, its
// detail holding detail.
func wantStartViolation(t *testing.T, d *deliveryRun, subject, detail string) *AuditError {
	t.Helper()
	rep, err := Audit(context.Background(), d.env, d.id)
	var ae *AuditError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAuditFailed) || ae.First.Check != AuditTicketStarts || ae.First.Subject != subject || !strings.Contains(ae.First.Detail, detail) {
		t.Fatalf("audit = %v; want %s: %s: …%s…", err, AuditTicketStarts, subject, detail)
	}
	if c := auditCheck(t, rep, AuditTicketStarts); c.Passed {
		t.Fatalf("%s passed with a violation", AuditTicketStarts)
	}
	return ae
}

func auditCheck(t *testing.T, rep *AuditReport, name string) AuditCheck {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("the audit has no check %s: %+v", name, rep.Checks)
	return AuditCheck{}
}
