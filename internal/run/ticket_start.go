package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/worktree"
)

// KindTicketStart is recorded before a ticket's worktree is first made: the commit it starts
// from and what that commit was computed from (worktree.Repo.Start of the run's base and the
// accepted candidates of the tickets it depends on). Resume, Manual Integration and
// Reconciliation compute it again from the ledger and compare.
const KindTicketStart = "ticket.start"

// Blockers of a ticket's start.
const (
	// BlockDependencyConflict: the accepted candidates a ticket depends on do not merge
	// cleanly, so there is no commit its worktree could start from.
	BlockDependencyConflict = "run_ticket_dependency_conflict"
	// BlockTicketStartMismatch: a ticket's recorded start commit is not the one its
	// dependencies' accepted candidates give, or its worktree's HEAD does not descend from it.
	BlockTicketStartMismatch = "run_ticket_start_mismatch"
)

// TicketStart is the body of ticket.start.
type TicketStart struct {
	Ticket string `json:"ticket"`
	// Base is the run's base; DependsOn the tickets the ticket depends on with their accepted
	// candidates' commits; Start the commit its worktree starts from: Base without
	// dependencies, the commit of one, rein's merge commit of several.
	Base      string     `json:"base"`
	DependsOn []StartDep `json:"dependsOn"`
	Start     string     `json:"start"`
}

// StartDep is one dependency of a [TicketStart].
type StartDep struct {
	Ticket string `json:"ticket"`
	Commit string `json:"commit"`
}

// start is the commit the ticket's worktree starts from: the recorded one, or base for a
// ticket that has none recorded yet.
func (t *ticketRun) start(base string) string {
	if t.Start != nil {
		return t.Start.Start
	}
	return base
}

// acceptedTicket returns ticket id's acceptance: the ticket loop's own (set as it accepts)
// or the ledger's.
func (r *Run) acceptedTicket(id string) (TicketAccepted, bool) {
	if t := r.Tickets.byID[id]; t != nil && t.Accepted != nil {
		return *t.Accepted, true
	}
	a, ok := r.Accepted[id]
	return a, ok
}

// startSpec is what ticket tk's start is computed from: base and the accepted candidates of
// the tickets it depends on, every one of which must be accepted.
func (r *Run) startSpec(tk contract.Ticket, base string) (worktree.StartSpec, error) {
	s := worktree.StartSpec{Run: r.ID, Ticket: tk.ID, Base: base}
	for _, d := range tk.DependsOn {
		a, ok := r.acceptedTicket(d)
		if !ok {
			return s, fmt.Errorf("%w: ticket %s of run %s depends on ticket %s, which has no accepted candidate yet", ErrNotRunnable, tk.ID, r.ID, d)
		}
		s.Deps = append(s.Deps, worktree.Dep{Ticket: d, Commit: a.Candidate.Head})
	}
	return s, nil
}

// startOf computes ticket tk's start from the ledger; a refusal of worktree.Repo.Start is
// returned as a blocker (not recorded).
func (r *Run) startOf(ctx context.Context, repo *worktree.Repo, tk contract.Ticket, base, stage string) (TicketStart, *Blocker, error) {
	spec, err := r.startSpec(tk, base)
	if err != nil {
		return TicketStart{}, nil, err
	}
	ts := TicketStart{Ticket: tk.ID, Base: base, DependsOn: []StartDep{}}
	for _, d := range spec.Deps {
		ts.DependsOn = append(ts.DependsOn, StartDep{Ticket: d.Ticket, Commit: d.Commit})
	}
	start, err := repo.Start(ctx, spec)
	we, ok := errors.AsType[*worktree.Error](err)
	switch {
	case ok && we.Code == worktree.CodeDependencyConflict:
		return ts, &Blocker{Code: BlockDependencyConflict, Stage: stage, Ticket: tk.ID,
			Detail: fmt.Sprintf("ticket %s depends on %s, whose accepted candidates do not merge cleanly (conflicting files: %s); no worktree was made for it",
				tk.ID, strings.Join(we.Tickets, " and "), strings.Join(we.Files, ", ")),
			Recovery: []string{"reject the ticket plan (rein run reject " + r.ID + " --gate ticket-plan --reason TEXT) so that Ticket Planning orders " + strings.Join(we.Tickets, " and ") + " (one depending on the other) or merges them",
				"abort the run (rein run abort " + r.ID + ")"}}, nil
	case ok && we.Code == worktree.CodeStartMismatch:
		return ts, r.startMismatch(stage, tk.ID, err.Error()), nil
	case err != nil:
		return ts, nil, fmt.Errorf("ticket %s's start commit: %w", tk.ID, err)
	}
	ts.Start = start
	return ts, nil, nil
}

func (r *Run) startMismatch(stage, ticket, detail string) *Blocker {
	return &Blocker{Code: BlockTicketStartMismatch, Stage: stage, Ticket: ticket,
		Detail: fmt.Sprintf("ticket %s's start commit does not agree with the run ledger: %s", ticket, detail),
		Recovery: []string{"restore the ticket's worktree $REIN_HOME/worktrees/" + r.ID + "/" + ticket + " (or remove it when it holds no candidate) and the repository's objects, then run `rein run next " + r.ID + "`",
			"abort the run (rein run abort " + r.ID + ") and start a new one"}}
}

// ticketStart returns the commit ticket t's worktree starts from: computed from the ledger
// and recorded (ticket.start) the first time, before the worktree is made; computed again and
// compared with the record after that (a crash between the record and the worktree, a
// retry), so a worktree is never made from anything else.
func (r *Run) ticketStart(ctx context.Context, env Env, l *ledger.Ledger, repo *worktree.Repo, tk contract.Ticket, t *ticketRun) (string, error) {
	ts, b, err := r.startOf(ctx, repo, tk, r.Tickets.Schedule.Base, StageTicketExecution)
	if err != nil {
		return "", err
	}
	if b != nil {
		return "", r.recordBlocker(l, *b)
	}
	if rec := t.Start; rec != nil {
		if rec.Start != ts.Start || rec.Base != ts.Base || !slices.Equal(rec.DependsOn, ts.DependsOn) {
			return "", r.recordBlocker(l, *r.startMismatch(StageTicketExecution, t.ID,
				fmt.Sprintf("recorded start %s (from %v), its dependencies' accepted candidates now give %s (from %v)", rec.Start, rec.DependsOn, ts.Start, ts.DependsOn)))
		}
		return rec.Start, nil
	}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketStart, Body: ts}); err != nil {
		return "", err
	}
	t.Start = &ts
	env.crash("ticket-start-" + t.ID)
	return ts.Start, nil
}

// applyTicketStart applies a ticket.start record.
func (s *ticketState) applyTicketStart(body []byte) error {
	var b TicketStart
	if err := decodeStrict(body, &b); err != nil {
		return err
	}
	if b.Ticket == "" || b.Start == "" {
		return fmt.Errorf("a ticket.start record names no ticket or no start")
	}
	s.get(b.Ticket).Start = &b
	return nil
}

// startNote says, for a review request, what ticket id's start commit holds: the diff under
// review is from there, so the accepted work of its dependencies is not reviewed again.
func (r *Run) startNote(id string) string {
	t := r.Tickets.byID[id]
	if t == nil || t.Start == nil || len(t.Start.DependsOn) == 0 {
		return "the run's base"
	}
	names := make([]string, len(t.Start.DependsOn))
	for i, d := range t.Start.DependsOn {
		names[i] = d.Ticket
	}
	return "the ticket's start: the run's base with the accepted work of " + strings.Join(names, ", ") + ", which it depends on and which was reviewed there"
}

// checkStarts computes every accepted ticket's start again from the approved plan and the
// accepted candidates (base is the run's): problems name each ticket whose recorded base is
// not that start, in plan order; merges are the commits rein made for starts of tickets with
// several dependencies (the start merge commits, each proven by being computed again), which
// reach the delivery branch as history of those tickets' candidates.
func (r *Run) checkStarts(ctx context.Context, repo *worktree.Repo, base string) (merges, problems []string, err error) {
	_, plan, err := r.approvedPlan()
	if err != nil {
		return nil, nil, err
	}
	g := gitx.Runner{Dir: repo.Dir()}
	for _, tk := range plan.Tickets {
		a, ok := r.acceptedTicket(tk.ID)
		if !ok {
			continue
		}
		ts, b, err := r.startOf(ctx, repo, tk, base, "")
		if errors.Is(err, ErrNotRunnable) {
			problems = append(problems, err.Error())
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if b != nil {
			problems = append(problems, b.Detail)
			continue
		}
		if a.Base != ts.Start {
			problems = append(problems, fmt.Sprintf("ticket %s was made from commit %s, which is not its start %s (%s)", tk.ID, a.Base, ts.Start, startWhat(ts)))
			continue
		}
		exclude := []string{base}
		for _, d := range ts.DependsOn {
			exclude = append(exclude, d.Commit)
		}
		if slices.Contains(exclude, ts.Start) {
			continue
		}
		made, err := g.Log(ctx, false, ts.Start, exclude...)
		if err != nil {
			return nil, nil, fmt.Errorf("reading ticket %s's start %s: %w", tk.ID, ts.Start, err)
		}
		for _, c := range made {
			merges = append(merges, c.ID)
		}
	}
	return merges, problems, nil
}

// startWhat says what a start is made of.
func startWhat(ts TicketStart) string {
	switch len(ts.DependsOn) {
	case 0:
		return "the run's base"
	case 1:
		return "ticket " + ts.DependsOn[0].Ticket + "'s accepted candidate"
	}
	names := make([]string, len(ts.DependsOn))
	for i, d := range ts.DependsOn {
		names[i] = d.Ticket
	}
	return "rein's merge of the accepted candidates of " + strings.Join(names, ", ")
}
