package run

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/worktree"
)

// ReviewSystem is the review role's system prompt.
const ReviewSystem = `You are an independent, read-only Ticket Reviewer of a rein delivery run. Use only the
current Ticket review request and its pack. Read the frozen candidate in your workspace with
read, grep, find and ls; change nothing. Do not read or rely on writer, operator or other review
conversation. Submit your review with rein_ticket_review: prose is no outcome.`

// ReviewIsolation is the review pack's isolation statement.
const ReviewIsolation = "The Review Session had only find, grep, ls, read, and the non-mutating Review Artifact submission authority; no writer transcript was supplied."

const reviewRules = `- Review the frozen candidate against the ticket contract and its specification sections.
- Put every defect the ticket must not be accepted with in blockingFindings, everything else in
  advisoryFindings; conclude accept only without blocking findings.
- candidateDigest is the frozen candidate's digest above.
- You may only read: any other tool is blocked (` + BlockReviewMutation + `).
- Never include secrets, credentials or tokens.`

// maxReviewDiff bounds the diff carried in a review request; a larger one is cut and the
// request says so (the reviewer reads the files).
const maxReviewDiff = 128 << 10

// reviewAttempt runs review attempt n of ticket tk's candidate c and records it.
func (r *Run) reviewAttempt(ctx context.Context, env Env, l *ledger.Ledger, tk contract.Ticket, t *ticketRun, c *CandidateRecord, n int) error {
	pol := r.Lock.Models[RoleReview]
	if name := modelName(pol); slices.Contains(t.writerModels(), name) {
		return r.recordBlocker(l, Blocker{Code: BlockReviewModelNotDistinct, Stage: StageTicketReview, Ticket: t.ID,
			Detail:   fmt.Sprintf("ticket %s's review model %s is a model its writer attempts used (%s); an independent review needs another model", t.ID, name, strings.Join(t.writerModels(), ", ")),
			Recovery: []string{"abort the run (rein run abort " + r.ID + "), give the review role a model no writer uses in " + ProfilePath + ", approve it and start a new run"}})
	}
	left := r.ticketBudget(env, RoleReview)
	if left.exhausted != "" {
		return r.recordBlocker(l, Blocker{Code: BlockBudgetExhausted, Stage: StageTicketReview, Ticket: t.ID,
			Detail:   fmt.Sprintf("the review role's %s budget is used up before ticket %s has an accepted review (%s)", left.exhausted, t.ID, left.detail),
			Recovery: []string{"abort the run (rein run abort " + r.ID + "), raise the review role's budget in " + ProfilePath + ", approve it and start a new run"}})
	}
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return err
	}
	wt, err := repo.Open(ctx, r.ticketDir(env, t.ID), c.Base)
	if err != nil {
		return err
	}
	if err := wt.Verify(ctx, c.sealed()); err != nil {
		return r.staleBlock(l, t, c, err)
	}
	req, packBytes, err := r.reviewRequest(ctx, tk, c, wt, n)
	if err != nil {
		return err
	}
	sid, dir := r.ticketSessionPlace(env, StageTicketReview, t.ID, n)
	if err := r.takeTicketLease(env, l, t, sid); err != nil {
		return err
	}
	started := ticketStarted{Ticket: t.ID, Attempt: n, Session: SessionAnchor{ID: sid, Dir: filepath.ToSlash(dir)}, Model: modelName(pol), Candidate: c.Digest}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketReviewStarted, Body: started}); err != nil {
		return err
	}
	t.OpenReview = &started
	var review *contract.TicketReview
	var ref *artifact.Reference
	sink := func(_ context.Context, acc *contract.Accepted) error {
		data := renderStageArtifact(r.ID, "review", "Ticket review "+t.ID, StageTicketReview, n, env.now(), json.RawMessage(acc.JSON))
		rf, err := r.writeTicketArtifact(t.ID, "review", fmt.Sprintf("review-%d", n), data)
		if err != nil {
			return err
		}
		env.crash("ticket-review-artifact")
		review, ref = acc.TicketReview, &rf
		return nil
	}
	rt, err := contract.NewReviewTool(contract.Refs{}.WithCandidate(c.Digest), sink)
	if err != nil {
		return err
	}
	a, err := r.runTicketSession(ctx, env, ticketSession{stage: StageTicketReview, role: RoleReview, ticket: t.ID, n: n, pol: pol, left: left,
		workspace: wt.Dir, sid: sid, dir: dir, system: ReviewSystem, prefix: ReviewRequestPrefix(r.ID), request: req, packBytes: packBytes,
		tools: []tool.Tool{rt}, standard: slices.Clone(policy.ReadOnlyTools), guard: newTicketGuard(RoleReview),
		reads: agentspec.ReadScope{Name: "the frozen candidate's worktree", Deny: []string{".git"}},
		outcome: func() error {
			_, err := rt.Outcome()
			return err
		}})
	if err != nil {
		return err
	}
	a.Candidate = c.Digest
	// The candidate is read again after the review: a review of a changed candidate is void.
	staleErr := wt.Verify(ctx, c.sealed())
	switch {
	case staleErr != nil:
		a.Outcome, a.Reason, a.Detail = "void", BlockReviewCandidateStale, "the candidate changed during the review: "+staleErr.Error()
		a.Artifact = ref
	case a.Outcome == "accepted":
		a.Artifact, a.Contract = ref, ""
		a.Blocking, a.Advisory, a.Conclusion = len(review.BlockingFindings), len(review.AdvisoryFindings), review.Conclusion
	}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketReviewAttempt, Body: a}); err != nil {
		return err
	}
	t.Reviews = append(t.Reviews, a)
	t.OpenReview = nil
	r.noteTicketAttempt(a)
	if err := r.releaseTicketLease(l, t); err != nil {
		return err
	}
	if staleErr != nil {
		return r.staleBlock(l, t, c, staleErr)
	}
	if a.provider != nil {
		return fmt.Errorf("ticket %s review attempt %d of run %s failed: the review role's provider is unavailable (recorded as %s): %w; run `rein run next %s` again once the provider answers",
			t.ID, n, r.ID, CauseProviderUnavailable, a.provider, r.ID)
	}
	return nil
}

// staleBlock is the blocker of a candidate that no longer matches its worktree. It is
// reported, never recorded (the void review is): restoring the worktree resolves it.
func (r *Run) staleBlock(_ *ledger.Ledger, t *ticketRun, c *CandidateRecord, err error) error {
	return &BlockedError{RunID: r.ID, Blockers: []Blocker{r.candidateStaleBlocker(t, c, err)}}
}

func (r *Run) candidateStaleBlocker(t *ticketRun, c *CandidateRecord, err error) Blocker {
	return Blocker{Code: BlockReviewCandidateStale, Stage: StageTicketReview, Ticket: t.ID,
		Detail: fmt.Sprintf("ticket %s's frozen candidate %s (commit %s) changed in its worktree, so no review of it holds: %v", t.ID, c.Digest, c.Head, err),
		Recovery: []string{fmt.Sprintf("restore the worktree to the frozen commit (git -C %s checkout --detach %s && git -C %s clean -fd, after saving what you need), then run `rein run next %s`: the review is run again",
			"$REIN_HOME/worktrees/"+r.ID+"/"+t.ID, c.Head, "$REIN_HOME/worktrees/"+r.ID+"/"+t.ID, r.ID),
			"abort the run (rein run abort " + r.ID + ") and start a new one"}}
}

// ticketEvidenceBlockers reports, for every ticket whose current candidate's last review was
// void, whether the candidate still differs from its worktree (BlockReviewCandidateStale).
func (r *Run) ticketEvidenceBlockers(env Env) []Blocker {
	if r.Tickets.Schedule == nil {
		return nil
	}
	var bs []Blocker
	for _, id := range r.Tickets.order {
		t := r.Tickets.byID[id]
		c := t.lastCandidate()
		if c == nil || t.Accepted != nil || !t.lastReviewVoid(c) {
			continue
		}
		if err := r.verifyWorktree(env, t, c); err != nil {
			bs = append(bs, r.candidateStaleBlocker(t, c, err))
		}
	}
	return bs
}

// lastReviewVoid reports whether c's latest review was voided by a change of the candidate.
func (t *ticketRun) lastReviewVoid(c *CandidateRecord) bool {
	rs := t.reviewsOf(c.Digest)
	return len(rs) > 0 && rs[len(rs)-1].Outcome == "void"
}

// verifyWorktree re-reads candidate c from its ticket's worktree.
func (r *Run) verifyWorktree(env Env, t *ticketRun, c *CandidateRecord) error {
	ctx := context.Background()
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return err
	}
	wt, err := repo.Open(ctx, r.ticketDir(env, t.ID), c.Base)
	if err != nil {
		return err
	}
	return wt.Verify(ctx, c.sealed())
}

// reviewRequest is the Ticket Review request: the ticket contract, the frozen candidate's
// identity, the candidate artifact, git state, the diff, the writer's verification
// provenance and the isolation statement — nothing of the writer's session.
func (r *Run) reviewRequest(ctx context.Context, tk contract.Ticket, c *CandidateRecord, wt *worktree.Worktree, n int) (string, int, error) {
	_, spec, err := r.approvedSpec()
	if err != nil {
		return "", 0, err
	}
	op, err := artifact.Open(artifact.Pack{Name: "ticket-review", Version: "1", References: []artifact.Reference{c.Artifact}}, r.Project)
	if err != nil {
		return "", 0, fmt.Errorf("ticket review pack: %w", err)
	}
	packed := artifact.Render(op)
	diff, err := wt.Diff(ctx, c.Base, c.Head)
	if err != nil {
		return "", 0, err
	}
	cut := ""
	if len(diff) > maxReviewDiff {
		diff, cut = diff[:maxReviewDiff], fmt.Sprintf("\n(the diff is cut at %d bytes; read the files for the rest)\n", maxReviewDiff)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ticket %s, review attempt %d.\n\n", ReviewRequestPrefix(r.ID), tk.ID, n)
	b.WriteString("## Ticket contract (approved)\n\n" + fence(jsonText(tk)) + "\n")
	b.WriteString("## Specification sections it covers\n\n" + fence(jsonText(coveredSections(spec, tk))) + "\n")
	fmt.Fprintf(&b, "## Frozen candidate identity\n\n- candidate digest: %s\n- HEAD: %s\n- change digest: %s\n- writer attempt: %d\n\n", c.Digest, c.Head, c.DiffDigest, c.Attempt)
	fmt.Fprintf(&b, "## Candidate git state\n\n- base: %s (%s)\n- parent: %s\n- HEAD: %s (clean worktree, verified before this review)\n- files changed from the base: %s\n\n", c.Base, r.startNote(tk.ID), c.Parent, c.Head, strings.Join(c.Files, ", "))
	b.WriteString("## Candidate diff\n\n" + fence(string(diff)) + cut + "\n")
	b.WriteString("## Writer verification provenance\n\nrein ran these approved commands in the writer's worktree before freezing:\n\n")
	for _, v := range c.Verification {
		fmt.Fprintf(&b, "- %s (%s): exit %d, passed %t\n", v.ID, strings.Join(v.Argv, " "), v.ExitCode, v.Passed)
	}
	b.WriteString("\n## Review isolation\n\n" + ReviewIsolation + "\n\n")
	fmt.Fprintf(&b, "## Pack\n\nThe candidate artifact.\n\n%s\n## Contract\n\nSubmit with %s (its parameters are the contract).\n\n## Rules\n\n%s\n%s\n",
		packed, contract.ReviewToolName, reviewRules, boundaryRules)
	return b.String(), len(packed), nil
}
