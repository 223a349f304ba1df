package run

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/run/schedule"
	"github.com/reinhq/rein/internal/worktree"
)

// MinAttemptTurns is the fan-out check's per-attempt minimum of model turns for a writer
// and a reviewer: one turn that calls the submission tool and one that ends the session.
const MinAttemptTurns = 2

// runTickets runs every ticket of the approved plan through Ticket Execution, Review,
// Verification and Acceptance, in dependsOn order, batch by batch (the tickets of a batch at
// the same time, see runBatch), and completes the ticket stages once every ticket is accepted.
func (r *Run) runTickets(ctx context.Context, env Env, l *ledger.Ledger) (string, error) {
	planRef, plan, err := r.approvedPlan()
	if err != nil {
		return r.Stage, err
	}
	if r.Tickets.Schedule == nil {
		if err := r.scheduleTickets(ctx, env, l, planRef, plan); err != nil {
			return StageTicketExecution, err
		}
	}
	byID := map[string]contract.Ticket{}
	for _, tk := range plan.Tickets {
		byID[tk.ID] = tk
	}
	for _, id := range slices.Concat(r.Tickets.Schedule.Batches...) {
		r.Tickets.get(id) // before any goroutine: byID is only read while a batch runs
	}
	for i, batch := range r.Tickets.Schedule.Batches {
		// Every locked input is reconciled before a batch fans out, on this goroutine alone:
		// while the batch runs nothing writes the lock, and a ticket checks only its own
		// request's skills (ticketSkills). Next reconciled before the first.
		if i > 0 {
			if err := r.reconcileAndRecord(env, l); err != nil {
				return StageTicketExecution, err
			}
		}
		if id, err := r.runBatch(ctx, env, l, batch, byID); err != nil {
			return r.ticketStage(id), err
		}
	}
	if _, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StageTicketAcceptance, Attempt: len(plan.Tickets), Outcome: "accepted"}}); err != nil {
		return StageTicketAcceptance, err
	}
	return StageTicketAcceptance, nil
}

// parallel is --parallel N (at least 1): the batch size a new schedule is cut to.
func (e Env) parallel() int { return max(1, e.Parallel) }

// scheduleTickets makes the fan-out decision and the delivery branch once, before any
// ticket starts, and records them (ticket.scheduled).
func (r *Run) scheduleTickets(ctx context.Context, env Env, l *ledger.Ledger, planRef artifact.Reference, plan *contract.TicketPlan) error {
	for _, tk := range plan.Tickets {
		if !ticketID.MatchString(tk.ID) {
			return r.recordBlocker(l, Blocker{Code: BlockTicketInvalid, Stage: StageTicketExecution,
				Detail:   fmt.Sprintf("ticket id %q cannot name a worktree: ids rein runs are 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit", tk.ID),
				Recovery: []string{"reject the ticket plan (rein run reject " + r.ID + " --gate ticket-plan --reason TEXT) so that Ticket Planning names its tickets anew"}})
		}
	}
	batches, err := schedule.Batches(plan.Tickets, env.parallel())
	if err != nil {
		return err
	}
	wp, rp := r.Lock.Models[RoleWriter], r.Lock.Models[RoleReview]
	wl, rl := r.budgetLeft(RoleWriter, wp), r.budgetLeft(RoleReview, rp)
	remaining := schedule.Roles{Writer: schedule.Budget{ModelTurns: wl.turns, Tokens: wl.tokens, Elapsed: wl.elapsed},
		Review: schedule.Budget{ModelTurns: rl.turns, Tokens: rl.tokens, Elapsed: rl.elapsed}}
	per := schedule.Roles{Writer: schedule.Budget{ModelTurns: MinAttemptTurns}, Review: schedule.Budget{ModelTurns: MinAttemptTurns}}
	var planned []schedule.Attempts
	for _, tk := range plan.Tickets {
		planned = append(planned, schedule.Attempts{Ticket: tk.ID, Writer: 1, Review: 1})
	}
	f, err := schedule.CheckFanOut(remaining, per, planned)
	if err != nil {
		return err
	}
	if !f.Covered {
		return r.recordBlocker(l, Blocker{Code: schedule.BlockBudgetInsufficient, Stage: StageTicketExecution,
			Detail: fmt.Sprintf("the remaining budgets cannot pay for the %d ticket(s) of the plan, each needing at least one writer and one review attempt of %d model turns: %s; no ticket was started",
				len(plan.Tickets), MinAttemptTurns, f.Detail()),
			Recovery: []string{"abort the run (rein run abort " + r.ID + "), raise the writer and review budgets in " + ProfilePath + ", approve it and start a new run",
				"reject the ticket plan (rein run reject " + r.ID + " --gate ticket-plan --reason TEXT) for a plan of fewer tickets"}})
	}
	base, ok := strings.CutPrefix(r.Snapshot.Version, "git:")
	if !ok {
		return r.recordBlocker(l, Blocker{Code: BlockBaseDrift, Stage: StageTicketExecution,
			Detail:   "the run started outside a git commit (requirement snapshot version " + r.Snapshot.Version + "): there is no base commit to make the delivery branch from",
			Recovery: []string{"abort the run (rein run abort " + r.ID + ") and start a new one in a git repository with a commit"}})
	}
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return err
	}
	if err := repo.CreateBranch(ctx, r.Snapshot.Branch, base); err != nil {
		if _, ok := worktree.CodeOf(err); ok {
			return r.recordBlocker(l, Blocker{Code: BlockBaseDrift, Stage: StageTicketExecution,
				Detail:   fmt.Sprintf("the delivery branch %s cannot be made at the run's base %s: %v", r.Snapshot.Branch, base, err),
				Recovery: []string{"delete or rename the branch " + r.Snapshot.Branch + " (rein never moves a branch it did not make), then run `rein run next " + r.ID + "`", "abort the run and start a new one with another --branch"}})
		}
		return err
	}
	s := TicketSchedule{Plan: planRef, Base: base, Branch: r.Snapshot.Branch, Parallel: env.parallel(), Batches: batches, FanOut: f.Detail()}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketScheduled, Body: s}); err != nil {
		return err
	}
	r.Tickets.Schedule = &s
	return nil
}

// ticketStage names the per-ticket stage ticket id is in.
func (r *Run) ticketStage(id string) string {
	t := r.Tickets.get(id)
	c := t.lastCandidate()
	switch {
	case t.Accepted != nil:
		return StageTicketAcceptance
	case c == nil || t.rejected(c) || len(t.Writers) > 0 && t.Writers[len(t.Writers)-1].Attempt.Attempt > c.Attempt:
		return StageTicketExecution
	case t.acceptedReview(c) == nil:
		return StageTicketReview
	case t.verificationOf(c.Digest) == nil:
		return StageTicketVerification
	}
	return StageTicketAcceptance
}

// acceptedReview returns the latest accepted (not void) review of c, or nil.
func (t *ticketRun) acceptedReview(c *CandidateRecord) *TicketAttempt {
	rs := t.reviewsOf(c.Digest)
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Outcome == "accepted" {
			return &rs[i]
		}
	}
	return nil
}

// rejected reports whether c's review found a blocking defect or its verification failed.
func (t *ticketRun) rejected(c *CandidateRecord) bool {
	if rv := t.acceptedReview(c); rv != nil && rv.Blocking > 0 {
		return true
	}
	v := t.verificationOf(c.Digest)
	return v != nil && !v.Passed
}

// countedWriters is the number of the ticket's writer attempts that count against
// MaxTicketAttempts: all but those a crash or the provider ended.
func (t *ticketRun) countedWriters() int {
	n := 0
	for _, a := range t.Writers {
		if c := a.FailureCause(); c != nil && (c.Code == CauseInterrupted || c.Code == CauseProviderUnavailable) {
			continue
		}
		n++
	}
	return n
}

// runTicket takes ticket tk from where its records leave it to acceptance or a blocker.
// Before each new writer attempt it asks stopped whether another ticket of the batch failed:
// then it ends with errBatchStopped, its attempts so far recorded (an attempt under way —
// the writer, its review, verification and acceptance — is finished first).
func (r *Run) runTicket(ctx context.Context, env Env, l *ledger.Ledger, tk contract.Ticket, stopped func() bool) error {
	t := r.Tickets.get(tk.ID)
	if err := r.settleTicket(ctx, env, l, t); err != nil {
		return err
	}
	for t.Accepted == nil {
		c := t.lastCandidate()
		switch stage := r.ticketStage(t.ID); stage {
		case StageTicketExecution:
			if stopped() {
				return errBatchStopped
			}
			if t.countedWriters() >= MaxTicketAttempts {
				return r.recordBlocker(l, Blocker{Code: BlockTicketFailed, Stage: stage, Ticket: t.ID,
					Detail: fmt.Sprintf("ticket %s used %d writer attempts without an accepted candidate", t.ID, t.countedWriters()),
					Recovery: []string{"read the attempts, reviews and verifications in `rein run status " + r.ID + "`",
						"reject the ticket plan (rein run reject " + r.ID + " --gate ticket-plan --reason TEXT) to re-plan, or abort the run (rein run abort " + r.ID + ")"}})
			}
			if left := r.ticketBudget(env, RoleWriter); left.exhausted != "" {
				return r.recordBlocker(l, Blocker{Code: BlockBudgetExhausted, Stage: stage, Ticket: t.ID,
					Detail:   fmt.Sprintf("the writer role's %s budget is used up before ticket %s has an accepted candidate (%s)", left.exhausted, t.ID, left.detail),
					Recovery: []string{"abort the run (rein run abort " + r.ID + "), raise the writer role's budget in " + ProfilePath + ", approve it and start a new run"}})
			}
			if err := r.writerAttempt(ctx, env, l, tk, t, t.writerAttempts()+1); err != nil {
				return err
			}
		case StageTicketReview:
			if err := r.nextReview(ctx, env, l, tk, t, c); err != nil {
				return err
			}
		case StageTicketVerification:
			if err := r.verifyTicket(ctx, env, l, t, c); err != nil {
				return err
			}
		default:
			if err := r.acceptTicket(l, t, c, *t.acceptedReview(c), t.verificationOf(c.Digest)); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextReview runs the next review of candidate c: after a void review the candidate must
// verify again (the stale blocker lifts, recorded with the evidence); the review attempts of
// one candidate are bounded by MaxStageAttempts.
func (r *Run) nextReview(ctx context.Context, env Env, l *ledger.Ledger, tk contract.Ticket, t *ticketRun, c *CandidateRecord) error {
	failed := 0
	for _, rv := range t.reviewsOf(c.Digest) {
		if cause := rv.FailureCause(); rv.Outcome == "failed" && (cause == nil || cause.Code != CauseInterrupted) {
			failed++
		}
	}
	if failed >= MaxStageAttempts {
		return r.recordBlocker(l, Blocker{Code: BlockTicketFailed, Stage: StageTicketReview, Ticket: t.ID,
			Detail:   fmt.Sprintf("ticket %s's candidate %s had %d review attempts without an accepted review", t.ID, c.Digest, failed),
			Recovery: []string{"read the review attempts in `rein run status " + r.ID + "` and adjust the review role's model or budget in " + ProfilePath + " (a new run)", "abort the run (rein run abort " + r.ID + ")"}})
	}
	if t.lastReviewVoid(c) {
		if err := r.verifyWorktree(env, t, c); err != nil {
			return r.staleBlock(l, t, c, err)
		}
	}
	return r.reviewAttempt(ctx, env, l, tk, t, c, len(t.Reviews)+1)
}
