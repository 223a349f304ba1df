package run

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/worktree"
)

// ticketStarts: for every ticket of the approved plan with an accepted candidate (in plan
// order), its start is computed again from the run's base (the locked snapshot's commit), the plan's dependsOn and the
// accepted candidates of those tickets (worktree.Repo.Start, as the ticket loop computed it);
// the ticket.start record must name that start, that base and those dependencies; the
// accepted candidate must have been made from it, its frozen commit must descend from it, and
// its recorded diff digest must be the diff's from that start. A ticket.start record of a
// ticket the approved plan does not hold is a violation too.
func (a *auditor) ticketStarts(ctx context.Context, violate func(string, string)) int {
	if len(a.r.Accepted) == 0 {
		return 0
	}
	_, plan, err := a.r.approvedPlan()
	if err != nil {
		violate("ticket plan", err.Error()+", yet the run ledger holds accepted tickets")
		return 0
	}
	repo, err := worktree.OpenRepo(ctx, a.r.Project)
	if err != nil {
		violate("repository", err.Error())
		return 0
	}
	base, detail := a.runBase()
	if detail != "" {
		violate("run base", detail)
		return 0
	}
	n := 0
	for _, tk := range plan.Tickets {
		acc, ok := a.r.Accepted[tk.ID]
		if !ok {
			continue
		}
		n++
		if detail := a.ticketStart(ctx, repo, tk, base, acc); detail != "" {
			violate("ticket "+tk.ID, detail)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(a.r.Tickets.byID)) {
		if t := a.r.Tickets.byID[id]; t.Start != nil && !slices.ContainsFunc(plan.Tickets, func(tk contract.Ticket) bool { return tk.ID == id }) {
			violate("ticket "+id, "the run ledger records a ticket.start for it, but the approved ticket plan has no such ticket")
		}
	}
	return n
}

// runBase is the run's base as the locked Requirement Snapshot names it (its version
// git:<commit>), which the ticket.scheduled record, when there is one, must name too; or what
// is wrong.
func (a *auditor) runBase() (string, string) {
	data, err := a.r.readArtifact(ArtSnapshot)
	if err != nil {
		return "", "the requirement snapshot: " + err.Error()
	}
	var snap Snapshot
	if err := decodeArtifact(data, &snap); err != nil {
		return "", "the requirement snapshot: " + err.Error()
	}
	base, ok := strings.CutPrefix(snap.Version, "git:")
	if !ok {
		return "", "the requirement snapshot names no base commit (version " + snap.Version + "), yet the run ledger holds accepted tickets"
	}
	if s := a.r.Tickets.Schedule; s != nil && s.Base != base {
		return "", fmt.Sprintf("the ticket.scheduled record names base %s, the requirement snapshot %s", s.Base, base)
	}
	return base, ""
}

// ticketStart checks one accepted ticket's start and returns what is wrong ("" when nothing).
func (a *auditor) ticketStart(ctx context.Context, repo *worktree.Repo, tk contract.Ticket, base string, acc TicketAccepted) string {
	ts, b, err := a.r.startOf(ctx, repo, tk, base, "")
	switch {
	case err != nil:
		return "its start cannot be computed again: " + err.Error()
	case b != nil:
		return b.Code + ": " + b.Detail
	}
	var rec *TicketStart
	if t := a.r.Tickets.byID[tk.ID]; t != nil {
		rec = t.Start
	}
	c := acc.Candidate
	switch {
	case rec == nil:
		return "the run ledger holds no ticket.start record for it, so the commit its worktree started from is not recorded"
	case rec.Start != ts.Start || rec.Base != ts.Base || !slices.Equal(rec.DependsOn, ts.DependsOn):
		return fmt.Sprintf("its ticket.start record names start %s (base %s, dependencies %v); computed again from %s it is %s (base %s, dependencies %v)",
			rec.Start, rec.Base, rec.DependsOn, startWhat(ts), ts.Start, ts.Base, ts.DependsOn)
	case acc.Base != rec.Start:
		return fmt.Sprintf("its accepted candidate %s names base %s, not its recorded start %s", c.Digest, acc.Base, rec.Start)
	}
	on, err := gitx.Runner{Dir: repo.Dir()}.IsAncestor(ctx, rec.Start, c.Head)
	switch {
	case err != nil:
		return fmt.Sprintf("whether its start %s is an ancestor of its frozen commit %s cannot be read: %s", rec.Start, c.Head, err.Error())
	case !on:
		return fmt.Sprintf("its frozen commit %s does not descend from its recorded start %s", c.Head, rec.Start)
	}
	d, err := repo.DiffDigest(ctx, rec.Start, c.Head)
	switch {
	case err != nil:
		return fmt.Sprintf("the diff from its start %s to its frozen commit %s cannot be read: %s", rec.Start, c.Head, err.Error())
	case d != c.DiffDigest:
		return fmt.Sprintf("its candidate's recorded diff digest %s is not the diff from its start %s (%s)", c.DiffDigest, rec.Start, d)
	}
	return ""
}
