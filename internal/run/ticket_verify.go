package run

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/worktree"
)

// verifyDir is the clean checkout a ticket's verification runs in; "_" starts no ticket id.
func (r *Run) verifyDir(env Env, ticket string) string {
	return filepath.Join(env.Home, "worktrees", r.ID, "_verify", ticket)
}

// verifyTicket runs the required verification commands on candidate c's frozen commit in a
// clean checkout, writes the verification artifact and records the result.
func (r *Run) verifyTicket(ctx context.Context, env Env, l *ledger.Ledger, t *ticketRun, c *CandidateRecord) error {
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return err
	}
	rep, err := verifyCommit(ctx, env, repo, r.verifyDir(env, t.ID), c.Head, r.Lock.Verification)
	if err != nil {
		return fmt.Errorf("ticket %s: verification of %s: %w", t.ID, c.Head, err)
	}
	rep.Ticket, rep.Attempt, rep.Candidate = t.ID, c.Attempt, c.Digest
	n := len(t.Verifications) + 1
	data := renderStageArtifact(r.ID, "verification", "Ticket verification "+t.ID, StageTicketVerification, n, env.now(), rep)
	ref, err := r.writeTicketArtifact(t.ID, "verification", fmt.Sprintf("verification-%d", n), data)
	if err != nil {
		return err
	}
	env.crash("ticket-verification-artifact")
	results := make([]CommandResult, len(rep.Commands))
	for i, cr := range rep.Commands {
		cr.OutputTail = "" // in the artifact, not the ledger
		results[i] = cr
	}
	v := TicketVerification{Ticket: t.ID, Attempt: c.Attempt, Candidate: c.Digest, Commit: c.Head, Passed: rep.Passed, Results: results, Artifact: ref}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketVerification, Body: v}); err != nil {
		return err
	}
	t.Verifications = append(t.Verifications, v)
	return nil
}

// acceptTicket records ticket.accepted: the candidate, its review and its verification.
func (r *Run) acceptTicket(l *ledger.Ledger, t *ticketRun, c *CandidateRecord, rv TicketAttempt, v *TicketVerification) error {
	w := TicketAttempt{}
	for _, a := range t.Writers {
		if a.Attempt.Attempt == c.Attempt {
			w = a
		}
	}
	acc := TicketAccepted{Ticket: t.ID, Attempt: c.Attempt, Base: c.Base,
		Candidate: AcceptedCandidate{Digest: c.Digest, Head: c.Head, DiffDigest: c.DiffDigest, Artifact: c.Artifact},
		Review:    *rv.Artifact, Verification: v.Artifact, WriterModel: w.Model, ReviewModel: rv.Model}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketAccepted, Body: acc}); err != nil {
		return err
	}
	t.Accepted = &acc
	return nil
}
