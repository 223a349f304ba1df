package run

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/worktree"
)

// Blockers of Reconciliation: the run ledger, its artifacts and git disagree.
const (
	// BlockForeignCommit: a commit on the delivery branch beyond the run's base is neither an
	// accepted candidate's (or of its chain from its ticket's base), nor rein's merge commit of
	// an accepted ticket, nor a recorded resolution of a conflict.
	BlockForeignCommit = "run_reconciliation_foreign_commit"
	// BlockCandidateMissing: an accepted candidate's commit is not on the delivery branch.
	BlockCandidateMissing = "run_reconciliation_candidate_missing"
	// BlockCandidateMismatch: an accepted candidate no longer matches what the ledger
	// recorded: its digest is not the digest of its parts, its diff or one of its artifacts
	// changed, or its commit is gone.
	BlockCandidateMismatch = "run_reconciliation_candidate_mismatch"
)

// reinIdentity is the author of every commit rein makes (worktree's fixed identity).
const reinIdentity = "rein <rein@rein.invalid>"

// foreignCommits returns the commits of base..head that the run does not account for: not in
// any accepted ticket's base..candidate chain (its base is its start: the run's base or the
// accepted work it depends on), not a start merge rein made for a ticket with several
// dependencies (computed again, checkStarts), not rein's merge commit of an accepted ticket
// of this run (two parents, the second the candidate, trailers naming run, ticket and
// candidate digest), and not in resolution.
func (r *Run) foreignCommits(ctx context.Context, repo *worktree.Repo, base, head string, resolution []string) ([]gitx.Commit, error) {
	g := gitx.Runner{Dir: repo.Dir()}
	starts, _, err := r.checkStarts(ctx, repo, base)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, id := range slices.Concat(resolution, starts) {
		known[id] = true
	}
	byTicket := map[string]TicketAccepted{}
	for _, a := range r.Accepted {
		byTicket[a.Ticket] = a
		chain, err := g.Log(ctx, false, a.Candidate.Head, a.Base)
		if err != nil {
			return nil, fmt.Errorf("reading ticket %s's candidate %s..%s: %w", a.Ticket, a.Base, a.Candidate.Head, err)
		}
		for _, c := range chain {
			known[c.ID] = true
		}
	}
	all, err := g.Log(ctx, false, head, base)
	if err != nil {
		return nil, fmt.Errorf("reading the delivery branch %s..%s: %w", base, head, err)
	}
	var foreign []gitx.Commit
	for _, c := range all {
		if known[c.ID] {
			continue
		}
		a, ok := byTicket[c.Trailer("Rein-Ticket")]
		if ok && len(c.Parents) == 2 && c.Parents[1] == a.Candidate.Head && c.Author == reinIdentity &&
			c.Trailer("Rein-Run") == r.ID && c.Trailer("Rein-Candidate") == a.Candidate.Digest {
			continue
		}
		foreign = append(foreign, c)
	}
	return foreign, nil
}

// reconciliationStage proves that the run ledger, its artifacts and git agree: the delivery
// branch is at the integrated head, every accepted candidate's commit is on it, nothing else
// is (beyond the base), and every accepted candidate is still what was recorded.
func (r *Run) reconciliationStage() checkStage {
	return checkStage{stage: StageReconciliation, run: func(ctx context.Context, env Env, n int) (*artifact.Reference, []Blocker, error) {
		bs, err := r.reconcileGit(ctx, StageReconciliation)
		return nil, bs, err
	}}
}

// reconcileGit is Reconciliation's check, also made again before the run gate is approved.
func (r *Run) reconcileGit(ctx context.Context, stage string) ([]Blocker, error) {
	in := r.Delivery.Integration
	if in == nil {
		return nil, fmt.Errorf("%w: run %s has no recorded integration", ErrNotRunnable, r.ID)
	}
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return nil, err
	}
	g := gitx.Runner{Dir: repo.Dir()}
	head, ok, err := repo.BranchHead(ctx, in.Branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []Blocker{r.branchMovedBlocker(stage, in.Branch, in.Head, "", "is gone; the integration left it")}, nil
	}
	if on, err := g.IsAncestor(ctx, in.Base, head); err != nil || !on {
		return []Blocker{r.branchMovedBlocker(stage, in.Branch, in.Head, head, "is no descendant of the run's base "+in.Base+"; the integration left it")}, err
	}
	var bs []Blocker
	for _, id := range slices.Sorted(maps.Keys(r.Accepted)) {
		bs = append(bs, r.candidateBlockers(ctx, repo, g, stage, r.Accepted[id], head)...)
	}
	_, problems, err := r.checkStarts(ctx, repo, in.Base)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		bs = append(bs, Blocker{Code: BlockCandidateMismatch, Stage: stage, Detail: p,
			Recovery: []string{"restore what changed (the run's artifacts, the repository's objects), " + r.recheck(), "abort the run (rein run abort " + r.ID + ")"}})
	}
	foreign, err := r.foreignCommits(ctx, repo, in.Base, head, in.Resolution)
	if err != nil {
		return nil, err
	}
	for _, c := range foreign {
		subject, _, _ := strings.Cut(c.Message, "\n")
		bs = append(bs, Blocker{Code: BlockForeignCommit, Stage: stage,
			Detail: fmt.Sprintf("commit %s (%s: %s) on the delivery branch %s is no accepted candidate's, no rein merge of an accepted ticket and no recorded resolution", c.ID, c.Author, plain(subject), in.Branch),
			Recovery: []string{fmt.Sprintf("remove it from the branch: put the branch back at the integrated head (git branch -f %s %s), %s", in.Branch, in.Head, r.recheck()),
				"abort the run (rein run abort " + r.ID + ")"}})
	}
	if len(bs) == 0 && head != in.Head {
		bs = append(bs, r.branchMovedBlocker(stage, in.Branch, in.Head, head, "is not the integrated head"))
	}
	return bs, nil
}

// candidateBlockers checks one accepted candidate against git and its artifacts.
func (r *Run) candidateBlockers(ctx context.Context, repo *worktree.Repo, g gitx.Runner, stage string, a TicketAccepted, head string) []Blocker {
	mismatch := func(what string) Blocker {
		return Blocker{Code: BlockCandidateMismatch, Stage: stage,
			Detail: fmt.Sprintf("ticket %s's accepted candidate %s (commit %s): %s", a.Ticket, a.Candidate.Digest, a.Candidate.Head, what),
			Recovery: []string{"restore what changed (the run's artifacts, the repository's objects), " + r.recheck(),
				"abort the run (rein run abort " + r.ID + ")"}}
	}
	c := a.Candidate
	if worktree.CandidateDigest(c.Head, c.DiffDigest, string(c.Artifact.Digest)) != c.Digest {
		return []Blocker{mismatch("the recorded digest is not the digest of its commit, diff and candidate artifact")}
	}
	for _, ref := range []artifact.Reference{c.Artifact, a.Review, a.Verification} {
		if _, err := r.readRef(ref); err != nil {
			return []Blocker{mismatch(fmt.Sprintf("artifact %s: %v", ref.ID, err))}
		}
	}
	d, err := repo.DiffDigest(ctx, a.Base, c.Head)
	if err != nil {
		return []Blocker{mismatch("its commit cannot be read: " + err.Error())}
	}
	if d != c.DiffDigest {
		return []Blocker{mismatch(fmt.Sprintf("the diff from its base %s has digest %s, not the frozen %s", a.Base, d, c.DiffDigest))}
	}
	if on, err := g.IsAncestor(ctx, c.Head, head); err != nil || !on {
		return []Blocker{{Code: BlockCandidateMissing, Stage: stage,
			Detail:   fmt.Sprintf("ticket %s's accepted candidate commit %s is not on the delivery branch (at %s)", a.Ticket, c.Head, head),
			Recovery: []string{"put the branch back at the integrated head, " + r.recheck(), "abort the run (rein run abort " + r.ID + ")"}}}
	}
	return nil
}
