package contract

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/reinhq/rein/internal/tool"
)

// ToolName is the name of the tool a workflow stage session submits its contract with.
const ToolName = "rein_stage_result"

// Sink stores an accepted contract (as an artifact, in the run ledger). An error means it was
// not stored: the submission is not accepted and the model may submit again.
type Sink func(ctx context.Context, a *Accepted) error

// StageResult is the rein_stage_result tool of one stage attempt: its schema is the stage's
// contract, it validates every call against the contract and the attempt's refs, hands the
// first accepted submission to the sink and refuses every later one. It is safe for
// concurrent use; calls are serialised.
type StageResult struct {
	c    *Contract
	refs Refs
	sink Sink

	mu       sync.Mutex
	accepted *Accepted
	refusals int
	problems map[Code]int // the refusals' problems by code
}

var _ tool.Tool = (*StageResult)(nil)

// NewStageResult returns the tool for one attempt of the stage whose contract is c.
func NewStageResult(c *Contract, refs Refs, sink Sink) (*StageResult, error) {
	if c == nil || sink == nil {
		return nil, errors.New("contract: NewStageResult needs a contract and a sink")
	}
	return &StageResult{c: c, refs: refs, sink: sink}, nil
}

// Spec describes the tool; its schema is the contract's.
func (t *StageResult) Spec() tool.Spec {
	return tool.Spec{
		Name: ToolName,
		Description: fmt.Sprintf("Submit the %s contract, the stage's only outcome. Ids are unique; references are ids of this stage's pack. "+
			"A refusal lists each problem by code and path: fix them and submit again.", t.c.kind),
		Snippet:    fmt.Sprintf("%s: submit the %s contract (the stage's only outcome)", ToolName, t.c.kind),
		Schema:     t.c.Schema(),
		Sequential: true,
		Replay:     tool.ReplayNever,
	}
}

// Run validates and, when accepted, stores the submission. A refusal is an error result
// whose Details is the *[Error].
func (t *StageResult) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.accepted != nil {
		err := &Error{Kind: t.c.kind, Problems: []Problem{{Code: CodeAlreadySubmitted, Path: "(root)",
			Message: fmt.Sprintf("a %s contract was already accepted in this attempt (%s); it cannot be replaced", t.c.kind, t.accepted.Digest)}}}
		return refusal(err), nil
	}
	a, err := t.c.Validate(call.Args, t.refs)
	if err != nil {
		if e, ok := IsRefusal(err); ok {
			t.refused(e)
			return refusal(e), nil
		}
		return tool.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	if err := t.sink(ctx, a); err != nil {
		return tool.Result{}, fmt.Errorf("the %s contract is valid but could not be stored (%w); submit it again", t.c.kind, err)
	}
	t.accepted = a
	res := tool.TextResult(fmt.Sprintf("Accepted the %s contract (%s). The stage's outcome is recorded; stop here.", t.c.kind, a.Digest))
	res.Details = a
	return res, nil
}

// refused counts a refused submission and its problems by code. t.mu is held.
func (t *StageResult) refused(e *Error) {
	t.refusals++
	if t.problems == nil {
		t.problems = map[Code]int{}
	}
	for _, p := range e.Problems {
		t.problems[p.Code]++
	}
}

// ArgsRefused counts a submission the kernel refused against the tool's schema before Run
// (tool.RefusalObserver), so that the attempt records it as a refused contract with the
// contract's own problem codes — never as a missing one. A submission the contract's checks
// would accept but the schema refused counts as [CodeSchemaRefused].
func (t *StageResult) ArgsRefused(raw string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.accepted != nil {
		return
	}
	_, err := t.c.Validate([]byte(raw), t.refs)
	e, ok := IsRefusal(err)
	if !ok {
		e = &Error{Kind: t.c.kind, Problems: []Problem{{Code: CodeSchemaRefused, Path: "(root)", Message: "refused by the tool's schema"}}}
	}
	t.refused(e)
}

func refusal(e *Error) tool.Result {
	r := tool.TextResult(e.Error())
	r.IsError = true
	r.Details = e
	return r
}

// Accepted returns the accepted submission, or nil.
func (t *StageResult) Accepted() *Accepted {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.accepted
}

// Reason says why a stage attempt has no outcome.
type Reason string

const (
	// ReasonContractMissing: the session ended (the model answered in prose) without
	// calling rein_stage_result.
	ReasonContractMissing Reason = "contract_missing"
	// ReasonContractRefused: the model called rein_stage_result, but every submission was
	// refused.
	ReasonContractRefused Reason = "contract_refused"
)

// AttemptError is a stage attempt that ended without an accepted contract. The run retries
// the stage in a fresh session within budget, then blocks.
type AttemptError struct {
	Kind     Kind
	Reason   Reason
	Refusals int
	// Problems counts the refused submissions' problems by code (the listed ones: a refusal
	// lists at most 64).
	Problems map[Code]int
}

func (e *AttemptError) Error() string {
	switch e.Reason {
	case ReasonContractRefused:
		return fmt.Sprintf("%s: the %s attempt ended with %d refused submission(s) and none accepted", e.Reason, e.Kind, e.Refusals)
	default:
		return fmt.Sprintf("%s: the %s attempt ended without a submission through %s; an answer in prose is no outcome", e.Reason, e.Kind, toolFor(e.Kind))
	}
}

// Outcome settles the attempt once its session has ended (the model's final answer,
// whatever its text, carries no outcome): the accepted contract, or an *[AttemptError] with
// [ReasonContractMissing] when the tool was never called successfully nor refused, or
// [ReasonContractRefused] when every submission was refused.
func (t *StageResult) Outcome() (*Accepted, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.accepted != nil {
		return t.accepted, nil
	}
	if t.refusals > 0 {
		return nil, &AttemptError{Kind: t.c.kind, Reason: ReasonContractRefused, Refusals: t.refusals, Problems: maps.Clone(t.problems)}
	}
	return nil, &AttemptError{Kind: t.c.kind, Reason: ReasonContractMissing}
}
