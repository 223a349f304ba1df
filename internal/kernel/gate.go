package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Gate decides whether a validated tool call may run (permission rules, an approval prompt).
// The kernel consults it in preflight, in source order, after the arguments validate and
// before any intent is recorded. A non-nil error refuses the call: its text becomes the
// call's error result — the model sees it and may adapt — the tool never runs, and no intent
// is recorded, since nothing happens. args are the validated arguments.
type Gate interface {
	Check(ctx context.Context, call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error
}

// ErrNeedsApproval marks a gate refusal a person could have lifted but nobody could be asked
// (a non-interactive run meeting an "ask" rule). The run goes on — the model sees the
// refusal — but ends with [StatusBlocked] and a *[BlockedError], so a caller can tell that
// the work may be incomplete.
var ErrNeedsApproval = errors.New("needs the user's approval")

// Refusal is a tool call the [Gate] or a before_tool hook refused.
type Refusal struct {
	Turn int
	Call *llm.ToolCall
	// Err is the gate's error, as the model saw it.
	Err error
}

// BlockedError says a run that otherwise completed had tool calls refused for want of an
// approval nobody could give. It matches [ErrNeedsApproval].
type BlockedError struct {
	// Refused are the refusals matching ErrNeedsApproval, in order.
	Refused []Refusal
}

func (e *BlockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d tool call(s) needed the user's approval, which this non-interactive run cannot ask for", len(e.Refused))
	for i, r := range e.Refused {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Refused)-i)
			break
		}
		fmt.Fprintf(&b, "; turn %d, %s: %v", r.Turn, r.Call.Name, r.Err)
	}
	return b.String()
}

// Unwrap returns ErrNeedsApproval.
func (e *BlockedError) Unwrap() error { return ErrNeedsApproval }

// check asks the gate about one validated call; nil when there is no gate.
func (r *run) check(turn int, p *pending) error {
	if r.cfg.Gate == nil {
		return nil
	}
	err := r.cfg.Gate.Check(r.ctx, p.call, p.tool.Spec(), p.args)
	if err != nil {
		r.out.Refused = append(r.out.Refused, Refusal{Turn: turn, Call: p.call, Err: err})
	}
	return err
}

// blocked returns the refusals that needed an approval, as a *BlockedError; nil when none did.
func (o *Outcome) blocked() error {
	var need []Refusal
	for _, r := range o.Refused {
		if errors.Is(r.Err, ErrNeedsApproval) {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return nil
	}
	return &BlockedError{Refused: need}
}
