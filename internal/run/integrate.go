package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/run/schedule"
	"github.com/reinhq/rein/internal/worktree"
)

// Blockers of Manual Integration.
const (
	// BlockBranchMoved: the delivery branch is not where the run left it (integration: not at
	// the tickets' base; later: not at the integrated head, and no descendant of it).
	BlockBranchMoved = "run_delivery_branch_moved"
	// BlockBranchCheckedOut: the delivery branch is checked out, so rein cannot move it.
	BlockBranchCheckedOut = "run_delivery_branch_checked_out"
	// BlockTicketBase: an accepted ticket was made from another commit than its start: the
	// run's base, the accepted candidate it depends on, or rein's merge of the several it
	// depends on (ticket_start.go).
	BlockTicketBase = "run_ticket_base_unknown"
)

// Integration is the body of an integration.recorded record: the delivery branch, the commit
// the tickets were made from (Base), the branch's commit before this integration (From: Base,
// or where a person's resolution left it) and after (Head), and for each ticket in dependency
// order the commit that brought its candidate onto the branch (rein's merge commit, or a
// person's). Resolution lists the commits of Base..Head a person made resolving a conflict.
type Integration struct {
	Attempt    int                `json:"attempt"`
	Branch     string             `json:"branch"`
	Base       string             `json:"base"`
	From       string             `json:"from"`
	Head       string             `json:"head"`
	Merges     []IntegrationMerge `json:"merges"`
	Resolution []string           `json:"resolution"`
}

// IntegrationMerge is one ticket of an integration.
type IntegrationMerge struct {
	Ticket    string `json:"ticket"`
	Commit    string `json:"commit"`    // the accepted candidate's commit
	Candidate string `json:"candidate"` // its candidate digest
	Merge     string `json:"merge"`     // the first commit of the branch's line that holds it
}

// IntegrationConflict is the body of an integration.conflict record: the ticket whose
// candidate does not merge onto the branch and the conflicting files. Nothing was changed.
type IntegrationConflict struct {
	Attempt int      `json:"attempt"`
	Branch  string   `json:"branch"`
	From    string   `json:"from"`
	Ticket  string   `json:"ticket"`
	Commit  string   `json:"commit"`
	Files   []string `json:"files"`
}

// ConflictError is what Next and Resume return when integration stopped on a conflict: the
// run waits for a person (errors.Is(err, ErrBlocked)).
type ConflictError struct {
	RunID    string
	Conflict IntegrationConflict
	Recovery []string
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s waits for a person: ticket %s (commit %s) does not merge onto %s; conflicting files: %s; the branch and every checkout are unchanged",
		e.RunID, e.Conflict.Ticket, e.Conflict.Commit, e.Conflict.Branch, strings.Join(e.Conflict.Files, ", "))
	for _, r := range e.Recovery {
		fmt.Fprintf(&b, "\n  recovery: %s", r)
	}
	return b.String()
}

func (e *ConflictError) Unwrap() error { return ErrBlocked }

// conflictRecovery is what a person can do about a conflict.
func (r *Run) conflictRecovery(c IntegrationConflict) []string {
	return []string{
		fmt.Sprintf("resolve it on the branch by hand: check out %s, merge the commits of the tickets (ticket %s is %s) resolving %s, commit, check out another branch again, then run `rein run resume %s`",
			c.Branch, c.Ticket, c.Commit, strings.Join(c.Files, ", "), r.ID),
		"abort the run (rein run abort " + r.ID + ")"}
}

// integrationSteps returns the approved plan's tickets in dependency order as integration
// steps, with the run's base. Every ticket of the plan must be accepted. Blockers name
// tickets made from another commit than their start (checkStarts: the base, the accepted
// candidate they depend on, or rein's merge of several).
func (r *Run) integrationSteps(ctx context.Context, repo *worktree.Repo) (string, []worktree.Step, []Blocker, error) {
	_, plan, err := r.approvedPlan()
	if err != nil {
		return "", nil, nil, err
	}
	order, err := schedule.Order(plan.Tickets)
	if err != nil {
		return "", nil, nil, fmt.Errorf("the approved ticket plan: %w", err)
	}
	if len(order) == 0 {
		return "", nil, nil, fmt.Errorf("%w: the approved ticket plan of run %s has no ticket", ErrNotRunnable, r.ID)
	}
	var steps []worktree.Step
	for _, id := range order {
		a, ok := r.Accepted[id]
		if !ok {
			return "", nil, nil, fmt.Errorf("%w: ticket %s of run %s has no accepted candidate; Manual Integration needs every ticket of the approved plan accepted", ErrNotRunnable, id, r.ID)
		}
		steps = append(steps, worktree.Step{Ticket: id, Commit: a.Candidate.Head, Candidate: a.Candidate.Digest})
	}
	base := r.runBase(order[0])
	_, problems, err := r.checkStarts(ctx, repo, base)
	if err != nil {
		return "", nil, nil, err
	}
	var bs []Blocker
	for _, p := range problems {
		bs = append(bs, Blocker{Code: BlockTicketBase, Stage: StageManualIntegration, Detail: p,
			Recovery: []string{"abort the run (rein run abort " + r.ID + ") and start a new one"}})
	}
	return base, steps, bs, nil
}

// runBase is the run's base: the schedule's, or (a run whose tickets were recorded without
// one) the base of first, the first ticket in dependency order, which depends on none.
func (r *Run) runBase(first string) string {
	if s := r.Tickets.Schedule; s != nil {
		return s.Base
	}
	return r.Accepted[first].Base
}

// runIntegration runs Manual Integration: the accepted tickets are merged onto the delivery
// branch in dependency order (worktree.Integrate: no checkout is written, the branch moves once
// or not at all). Its refusals (a moved or checked-out branch, an unknown ticket base) are
// check blockers; a conflict is recorded as such and the run waits for a person. resolved
// says a person resolved a conflict by hand (rein run resume): integration continues from the
// branch's current commit, and the commits the person made are recorded as the resolution.
func (r *Run) runIntegration(ctx context.Context, env Env, l *ledger.Ledger, resolved bool) error {
	if r.Snapshot == nil {
		return fmt.Errorf("run %s has no requirement snapshot", r.ID)
	}
	branch := r.Snapshot.Branch
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return err
	}
	base, steps, bs, err := r.integrationSteps(ctx, repo)
	if err != nil {
		return err
	}
	g := gitx.Runner{Dir: repo.Dir()}
	from := base
	if resolved && len(bs) == 0 {
		head, ok, err := repo.BranchHead(ctx, branch)
		if err != nil {
			return err
		}
		if on, err := g.IsAncestor(ctx, base, head); !ok || err != nil || !on {
			bs = append(bs, r.branchMovedBlocker(StageManualIntegration, branch, base, head, "is no descendant of the run's base"))
		} else {
			from = head
		}
	}
	n := r.Attempts[StageManualIntegration] + 1
	if _, err := l.Append(ledger.Entry{Kind: KindStageStarted, Body: stageBody{Stage: StageManualIntegration, Attempt: n}}); err != nil {
		return err
	}
	r.Attempts[StageManualIntegration] = n
	var in worktree.Integration
	if len(bs) == 0 {
		in, err = repo.Integrate(ctx, r.ID, branch, from, steps)
		if we, ok := errors.AsType[*worktree.Error](err); ok {
			switch we.Code {
			case worktree.CodeMergeConflict:
				c := IntegrationConflict{Attempt: n, Branch: branch, From: from, Ticket: stepOf(steps, we.Want), Commit: we.Want, Files: we.Files}
				if _, err := l.Append(ledger.Entry{Kind: KindIntegrationConflict, Body: c}); err != nil {
					return err
				}
				r.Delivery.Conflict = &c
				return &ConflictError{RunID: r.ID, Conflict: c, Recovery: r.conflictRecovery(c)}
			case worktree.CodeBranchMoved:
				bs, err = append(bs, r.branchMovedBlocker(StageManualIntegration, branch, from, we.Got, "is not at the commit integration starts from")), nil
			case worktree.CodeBranchCheckedOut:
				bs, err = append(bs, Blocker{Code: BlockBranchCheckedOut, Stage: StageManualIntegration,
					Detail:   fmt.Sprintf("the delivery branch %s is checked out in %s; rein moves it only where no checkout would be left behind", branch, strings.Join(we.Files, ", ")),
					Recovery: []string{"check out another branch there (e.g. git switch --detach), " + r.recheck(), "abort the run (rein run abort " + r.ID + ")"}}), nil
			}
		}
		if err != nil {
			return err
		}
	}
	if len(bs) > 0 {
		res := CheckResult{Stage: StageManualIntegration, Attempt: n, Outcome: CheckFailed, Blockers: bs}
		if _, err := l.Append(ledger.Entry{Kind: KindCheckResult, Body: res}); err != nil {
			return err
		}
		return &BlockedError{RunID: r.ID, Blockers: bs}
	}
	env.crash("integrated")
	rec, err := r.integrationRecord(ctx, repo, n, base, from, in, resolved)
	if err != nil {
		return err
	}
	if _, err := l.Append(ledger.Entry{Kind: KindIntegrated, Body: rec}); err != nil {
		return err
	}
	r.Delivery.Integration, r.Delivery.Conflict = &rec, nil
	_, err = l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StageManualIntegration, Attempt: n, Outcome: CheckPassed}})
	return err
}

func stepOf(steps []worktree.Step, commit string) string {
	for _, s := range steps {
		if s.Commit == commit {
			return s.Ticket
		}
	}
	return ""
}

func (r *Run) branchMovedBlocker(stage, branch, want, got, what string) Blocker {
	return Blocker{Code: BlockBranchMoved, Stage: stage,
		Detail: fmt.Sprintf("the delivery branch %s is at %s, which %s (%s)", branch, orDash(got), what, want),
		Recovery: []string{fmt.Sprintf("put the branch back (git branch -f %s %s), %s", branch, want, r.recheck()),
			"abort the run (rein run abort " + r.ID + ")"}}
}

// integrationRecord builds the integration record from what Integrate returned and the
// branch's line: each ticket's merge is the first commit of Base..Head's first-parent line
// that holds its candidate (so a repeated integration after a crash, and a person's
// resolution, name the commits as well as a fresh one). Only a person's resolution records
// the other commits of Base..Head, as its own.
func (r *Run) integrationRecord(ctx context.Context, repo *worktree.Repo, n int, base, from string, in worktree.Integration, resolved bool) (Integration, error) {
	g := gitx.Runner{Dir: repo.Dir()}
	rec := Integration{Attempt: n, Branch: in.Branch, Base: base, From: from, Head: in.Head, Merges: []IntegrationMerge{}, Resolution: []string{}}
	line, err := g.Log(ctx, true, in.Head, base)
	if err != nil {
		return rec, fmt.Errorf("reading the delivery branch's line %s..%s: %w", base, in.Head, err)
	}
	for _, m := range in.Merges {
		im := IntegrationMerge{Ticket: m.Ticket, Commit: m.Commit, Candidate: m.Candidate, Merge: m.Into}
		for _, c := range line {
			if on, err := g.IsAncestor(ctx, m.Commit, c.ID); err != nil {
				return rec, err
			} else if on {
				im.Merge = c.ID
				break
			}
		}
		rec.Merges = append(rec.Merges, im)
	}
	if !resolved {
		return rec, nil // anything else on the branch is Reconciliation's to find, never blessed here
	}
	foreign, err := r.foreignCommits(ctx, repo, base, in.Head, nil)
	if err != nil {
		return rec, err
	}
	for _, c := range foreign {
		rec.Resolution = append(rec.Resolution, c.ID)
	}
	return rec, nil
}

// nextDelivery is `rein run next` at the stages after the tickets; ok is false at any other
// stage.
func (r *Run) nextDelivery(ctx context.Context, env Env, l *ledger.Ledger) (string, bool, error) {
	switch r.Stage {
	case StageManualIntegration:
		return r.Stage, true, r.nextIntegration(ctx, env, l)
	case StageReconciliation:
		return r.Stage, true, r.runCheck(ctx, env, l, r.reconciliationStage())
	case StageFinalChecklist:
		return r.Stage, true, r.runCheck(ctx, env, l, r.checklistStage())
	case StageFullVerification:
		return r.Stage, true, r.runCheck(ctx, env, l, r.fullVerificationStage())
	case StageRunAcceptance:
		d := "SHA256"
		if s := r.Delivery.Summary; s != nil {
			d = string(s.Digest)
		}
		return r.Stage, true, fmt.Errorf("%w: run %s is at Run Acceptance: read the delivery summary (rein run show %s %s) and approve it with `rein run approve %s --gate run --digest %s`, or abort the run (rein run abort %s)",
			ErrNotRunnable, r.ID, r.ID, ArtDeliverySummary, r.ID, d, r.ID)
	case StageDeliveryReady:
		return r.Stage, true, r.deliveryReady(env, l)
	}
	return "", false, nil
}

// nextIntegration runs Manual Integration, unless a conflict waits for a person (resume
// continues after the resolution) or an integration a crash left without its stage.completed
// only needs it.
func (r *Run) nextIntegration(ctx context.Context, env Env, l *ledger.Ledger) error {
	if c := r.Delivery.Conflict; c != nil {
		return &ConflictError{RunID: r.ID, Conflict: *c, Recovery: r.conflictRecovery(*c)}
	}
	if in := r.Delivery.Integration; in != nil && in.Attempt == r.Attempts[StageManualIntegration] {
		_, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StageManualIntegration, Attempt: in.Attempt, Outcome: CheckPassed}})
		return err
	}
	return r.runIntegration(ctx, env, l, false)
}
