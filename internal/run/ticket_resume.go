package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/worktree"
)

// settleTicket settles what a crash left of ticket t, by evidence, before anything new runs
// on it: a lease whose owner is proven dead is reclaimed (a live owner refuses); a writer
// attempt started and not settled is accepted when its candidate was recorded, or when its
// freeze intent was recorded and the worktree holds exactly that attempt's commit (the
// candidate is then recorded: the commit is found, never made twice); it failed (interrupted)
// when nothing was frozen; anything else blocks with unknown_outcome. A review started and
// not settled failed (interrupted): a review changes nothing, so the next one simply runs.
func (r *Run) settleTicket(ctx context.Context, env Env, l *ledger.Ledger, t *ticketRun) error {
	if err := r.reclaimTicketLease(l, t); err != nil {
		return err
	}
	if w := t.OpenWriter; w != nil {
		a, err := r.writerEvidence(ctx, env, l, t, w)
		if err != nil {
			return err
		}
		if err := r.settleWriter(l, t, a); err != nil {
			return err
		}
	}
	if rv := t.OpenReview; rv != nil {
		a := r.interrupted(env, StageTicketReview, t.ID, rv)
		a.Candidate = rv.Candidate
		if _, err := l.Append(ledger.Entry{Kind: KindTicketReviewAttempt, Body: a}); err != nil {
			return err
		}
		t.Reviews = append(t.Reviews, a)
		t.OpenReview = nil
		r.noteTicketAttempt(a)
	}
	return nil
}

// interrupted is the failed attempt record of an attempt a crash ended.
func (r *Run) interrupted(env Env, stage, ticket string, s *ticketStarted) TicketAttempt {
	a := TicketAttempt{Ticket: ticket, Model: s.Model, Attempt: Attempt{Stage: stage, Attempt: s.Attempt, Outcome: "failed",
		Reason: ReasonInterrupted, Cause: &Cause{Code: CauseInterrupted}, Session: SessionAnchor{ID: s.Session.ID, Dir: s.Session.Dir}}}
	a.Detail = "interrupted before anything was recorded as its outcome; settled by resume"
	dir := filepath.Join(env.Home, filepath.FromSlash(s.Session.Dir))
	if _, err := os.Stat(filepath.Join(dir, ledger.FileName)); err == nil {
		if sl, _, err := ledger.OpenReadOnly(dir, ledger.Options{}); err == nil {
			a.Session.Seq, a.Session.Hash = sl.Head()
			sl.Close()
		}
	}
	return a
}

// writerEvidence settles an interrupted writer attempt (see settleTicket).
func (r *Run) writerEvidence(ctx context.Context, env Env, l *ledger.Ledger, t *ticketRun, w *ticketStarted) (TicketAttempt, error) {
	a := r.interrupted(env, StageTicketExecution, t.ID, w)
	if c := t.candidate(w.Attempt); c != nil {
		a.Outcome, a.Cause, a.Candidate = "accepted", nil, c.Digest
		a.Detail = "interrupted after its candidate was frozen and recorded; settled by resume from the candidate record"
		return a, nil
	}
	in := t.Intent
	if in == nil || in.Attempt != w.Attempt {
		return a, r.checkUnfrozen(ctx, env, l, t, w)
	}
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return a, err
	}
	wt, err := repo.Open(ctx, r.ticketDir(env, t.ID), t.start(r.Tickets.Schedule.Base))
	if err != nil {
		return a, r.unknownTicket(l, t, w, "the worktree cannot be opened: "+err.Error())
	}
	head, err := wt.Head(ctx)
	if err != nil {
		return a, err
	}
	if head == in.Parent {
		a.Detail = "interrupted after its freeze intent and before the freeze commit (HEAD is still the attempt's parent); settled by resume, nothing frozen"
		return a, nil
	}
	if _, err := r.readRef(*in.Artifact); err != nil {
		return a, r.unknownTicket(l, t, w, "the candidate artifact of the freeze intent does not read back: "+err.Error())
	}
	c, err := r.freezeCandidate(ctx, env, l, t, wt, *in)
	if err != nil {
		var we *worktree.Error
		if errors.As(err, &we) {
			return a, r.unknownTicket(l, t, w, "HEAD "+head+" is not the attempt's freeze commit: "+err.Error())
		}
		return a, err
	}
	a.Outcome, a.Cause, a.Candidate = "accepted", nil, c.Digest
	a.Detail = "interrupted after its freeze commit; settled by resume: the commit was found (not made again), sealed and recorded"
	return a, nil
}

// checkUnfrozen settles a writer attempt with no freeze intent: nothing can have been frozen,
// so HEAD must still be its parent; a HEAD that moved is an outcome rein cannot explain.
func (r *Run) checkUnfrozen(ctx context.Context, env Env, l *ledger.Ledger, t *ticketRun, w *ticketStarted) error {
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return err
	}
	wt, err := repo.Open(ctx, r.ticketDir(env, t.ID), t.start(r.Tickets.Schedule.Base))
	if err != nil {
		var we *worktree.Error
		if errors.As(err, &we) && we.Code == worktree.CodeNotWorktree && w.Parent == t.start(r.Tickets.Schedule.Base) {
			return nil // the worktree was never made: nothing can have been frozen
		}
		if errors.As(err, &we) && we.Code == worktree.CodeStartMismatch {
			return r.unknownTicket(l, t, w, err.Error())
		}
		return err
	}
	if head, err := wt.Head(ctx); err != nil {
		return err
	} else if head != w.Parent {
		return r.unknownTicket(l, t, w, fmt.Sprintf("no freeze intent was recorded, yet the worktree's HEAD is %s, not the attempt's parent %s", head, w.Parent))
	}
	return nil
}

// unknownTicket blocks a ticket whose interrupted writer attempt cannot be settled.
func (r *Run) unknownTicket(l *ledger.Ledger, t *ticketRun, w *ticketStarted, detail string) error {
	return r.recordBlocker(l, Blocker{Code: BlockUnknownOutcome, Stage: StageTicketExecution, Ticket: t.ID,
		Detail: fmt.Sprintf("ticket %s writer attempt %d was interrupted and its outcome cannot be proven: %s", t.ID, w.Attempt, detail),
		Recovery: []string{"inspect the worktree $REIN_HOME/worktrees/" + r.ID + "/" + t.ID + " and the attempt's session ledger $REIN_HOME/" + w.Session.Dir,
			"abort the run (rein run abort " + r.ID + ") and start a new one"}})
}
