package contract

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reinhq/rein/internal/tool"
)

// The ticket tools' names.
const (
	ReviewToolName    = "rein_ticket_review"
	CandidateToolName = "rein_ticket_candidate"
)

// toolFor names the tool a contract of kind k is submitted with.
func toolFor(k Kind) string {
	switch k {
	case KindTicketReview:
		return ReviewToolName
	case KindTicketCandidate:
		return CandidateToolName
	}
	return ToolName
}

// ReviewTool is the rein_ticket_review tool of one review attempt: a [StageResult] for the
// Ticket Review contract, bound (Refs.WithCandidate) to the digest of the frozen candidate
// under review. The first accepted review is the attempt's outcome; the sink stores it. The
// engine re-reads the candidate after the session ends: a review of a candidate that changed
// is void whatever it says.
type ReviewTool struct {
	*StageResult
}

var _ tool.Tool = (*ReviewTool)(nil)

// NewReviewTool returns the tool for one review attempt; refs must bind the candidate digest.
func NewReviewTool(refs Refs, sink Sink) (*ReviewTool, error) {
	if refs.ticket.candidate == "" {
		return nil, errors.New("contract: NewReviewTool needs Refs bound to the candidate digest (Refs.WithCandidate)")
	}
	st, err := NewStageResult(mustContract(KindTicketReview), refs, sink)
	if err != nil {
		return nil, err
	}
	return &ReviewTool{st}, nil
}

// Spec describes the tool; its schema is the Ticket Review contract's.
func (t *ReviewTool) Spec() tool.Spec {
	return tool.Spec{
		Name: ReviewToolName,
		Description: fmt.Sprintf("Submit your review of the frozen candidate as the closed Ticket Review contract. "+
			"The review has an outcome only once this tool accepts a submission; prose is not an outcome. "+
			"candidateDigest must be the candidate digest the review request gives. Put every defect the ticket must not be accepted with in blockingFindings, "+
			"everything else in advisoryFindings; lists hold at most %d items; conclude accept only without blocking findings. "+
			"A refused submission lists every problem with a code and a path: fix them and submit again. Only one submission is accepted. "+
			"This tool changes no file.", MaxItems),
		Snippet:    ReviewToolName + ": submit the review of the frozen candidate (the review's only outcome)",
		Schema:     t.c.Schema(),
		Sequential: true,
		Replay:     tool.ReplayNever,
	}
}

// Frozen is the identity of a candidate the engine froze.
type Frozen struct {
	Commit     string `json:"commit"`
	DiffDigest string `json:"diffDigest"`
	// Digest is the candidate digest: over the commit, the diff and the candidate artifact.
	Digest string `json:"digest"`
}

// Freezer is the engine's side of rein_ticket_candidate: given a submission that passed
// validation, it checks what only rein can — that the calling session is the ticket's
// current attempt, that the worktree has a non-empty tracked diff, that every required
// verification command (and each one the submission names) passes when rein runs it, that
// the attempt is within budget — and then freezes the candidate (commit, candidate
// artifact, digests) and records it. A check that fails is an *[Error] made with
// [CandidateRefusal]: the model sees it and may fix its work and submit again. Any other
// error means nothing was frozen and the attempt stays open.
type Freezer func(ctx context.Context, a *Accepted) (Frozen, error)

// CandidateRefusal returns the refusal a [Freezer] reports a failed check with. Its message
// is shown to the writer's model.
func CandidateRefusal(c Code, path, format string, args ...any) *Error {
	var ps problems
	ps.add(c, path, format, args...)
	return ps.err(KindTicketCandidate).(*Error)
}

// Candidate is an accepted and frozen candidate submission.
type Candidate struct {
	*Accepted
	Frozen Frozen
}

// CandidateTool is the rein_ticket_candidate tool of one writer attempt. It validates each
// call against the ticket candidate contract (bound with Refs.WithTicket to the attempt's
// ticket and the approved command ids) and hands a valid submission to the [Freezer]. Calls
// are serialised; the first submission the freezer accepts is the attempt's outcome and
// every later call is refused ([CodeAlreadySubmitted]).
type CandidateTool struct {
	c      *Contract
	refs   Refs
	freeze Freezer

	mu       sync.Mutex
	result   *Candidate
	refusals int
}

var _ tool.Tool = (*CandidateTool)(nil)

// NewCandidateTool returns the tool for one writer attempt; refs must bind the ticket.
func NewCandidateTool(refs Refs, f Freezer) (*CandidateTool, error) {
	if f == nil || refs.ticket.id == "" {
		return nil, errors.New("contract: NewCandidateTool needs a freezer and Refs bound to the ticket (Refs.WithTicket)")
	}
	return &CandidateTool{c: mustContract(KindTicketCandidate), refs: refs, freeze: f}, nil
}

// Spec describes the tool; its schema is the ticket candidate contract's.
func (t *CandidateTool) Spec() tool.Spec {
	return tool.Spec{
		Name: CandidateToolName,
		Description: "Submit this attempt's work as the ticket's candidate. rein then checks it itself: the worktree must hold a change, " +
			"every required verification command must pass when rein runs it, and the attempt must be within budget; then it commits the change and freezes it for review. " +
			"A refused submission says why with a code: fix the work and submit again. Only one submission is accepted; after it, stop.",
		Snippet:    CandidateToolName + ": submit the ticket's candidate (the attempt's only outcome)",
		Schema:     t.c.Schema(),
		Sequential: true,
		Replay:     tool.ReplayNever,
	}
}

// Run validates the submission and, when valid, asks the freezer to check and freeze it. A
// refusal is an error result whose Details is the *[Error].
func (t *CandidateTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.result != nil {
		return refusal(&Error{Kind: KindTicketCandidate, Problems: []Problem{{Code: CodeAlreadySubmitted, Path: "(root)",
			Message: fmt.Sprintf("a candidate was already frozen in this attempt (%s); it cannot be replaced", t.result.Frozen.Digest)}}}), nil
	}
	a, err := t.c.Validate(call.Args, t.refs)
	if e, ok := IsRefusal(err); ok {
		t.refusals++
		return refusal(e), nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	fr, err := t.freeze(ctx, a)
	if e, ok := IsRefusal(err); ok {
		t.refusals++
		return refusal(e), nil
	}
	if err != nil {
		return tool.Result{}, fmt.Errorf("the candidate could not be frozen (%w); nothing was recorded, submit it again", err)
	}
	t.result = &Candidate{Accepted: a, Frozen: fr}
	res := tool.TextResult(fmt.Sprintf("Accepted: the candidate is frozen at commit %s (candidate digest %s) and goes to review. The attempt is done; stop here.", fr.Commit, fr.Digest))
	res.Details = t.result
	return res, nil
}

// Accepted returns the frozen candidate, or nil.
func (t *CandidateTool) Accepted() *Candidate {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result
}

// Outcome settles the attempt once its session has ended: the frozen candidate, or an
// *[AttemptError] with [ReasonContractMissing] (never submitted) or [ReasonContractRefused]
// (every submission refused, by validation or by the freezer's checks).
func (t *CandidateTool) Outcome() (*Candidate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.result != nil:
		return t.result, nil
	case t.refusals > 0:
		return nil, &AttemptError{Kind: KindTicketCandidate, Reason: ReasonContractRefused, Refusals: t.refusals}
	}
	return nil, &AttemptError{Kind: KindTicketCandidate, Reason: ReasonContractMissing}
}
