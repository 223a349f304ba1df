package system

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// permissionGate is the kernel's Gate over the permission rules: Deny refuses with the
// policy's message; Ask asks the user through confirm, or — in a non-interactive run —
// refuses with an error matching kernel.ErrNeedsApproval, so the run ends blocked; Allow and
// NoMatch let the call run.
type permissionGate struct {
	policy *policy.Policy
	// confirm asks a yes/no question on the terminal; nil in a non-interactive run.
	confirm func(question string) (bool, error)
}

// needsApproval is an ask refusal nobody could answer: its text is the policy's, and it
// matches both the *refusal.Error and kernel.ErrNeedsApproval.
type needsApproval struct{ err error }

func (e *needsApproval) Error() string   { return e.err.Error() }
func (e *needsApproval) Unwrap() []error { return []error{e.err, kernel.ErrNeedsApproval} }

// Check implements kernel.Gate.
func (g *permissionGate) Check(_ context.Context, call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
	d := g.policy.Decide(spec.Name, args)
	switch d.Verdict {
	case policy.Deny:
		return d.Err()
	case policy.Ask:
		if g.confirm == nil {
			return &needsApproval{err: d.Err()}
		}
		yes, err := g.confirm(fmt.Sprintf("rein: %s wants to run: %s\n(permission rule %q asks first) Allow it once? [y/N] ", spec.Name, d.Part, d.Rule))
		if err != nil {
			return &needsApproval{err: &refusal.Error{Code: policy.CodeApprovalRequired, Message: d.Reason, Err: err}}
		}
		if !yes {
			return &refusal.Error{Code: policy.CodeApprovalRequired, Message: fmt.Sprintf("the user declined %s (rule %q); do not retry it: choose another approach, or ask the user what to do", d.Part, d.Rule)}
		}
	}
	return nil
}

// newPolicy compiles the merged permission rules for a run in the workspace dir of the
// project root. Besides pathrule.DefaultProtected (relative to the workspace), writes may never
// touch $REIN_HOME (settings, trust decisions, sessions) or the project's .git and .rein when
// the workspace is below the project root.
func newPolicy(rules policy.Rules, dir, root, home string) (*policy.Policy, error) {
	protected := append([]string(nil), pathrule.DefaultProtected...)
	for _, p := range []string{home, filepath.Join(root, ".git"), filepath.Join(root, ".rein")} {
		if p != "" && filepath.IsAbs(p) {
			protected = append(protected, pathrule.EscapeGlob(filepath.ToSlash(p)))
		}
	}
	pol, err := policy.New(policy.Config{Rules: rules, Dir: dir, Protected: protected})
	if err != nil {
		return nil, fmt.Errorf("%w: permission rules: %w", ErrConfig, err)
	}
	return pol, nil
}
