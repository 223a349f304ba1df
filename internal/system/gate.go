package system

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	// approve, when set, answers instead of confirm (Options.Approve).
	approve func(ctx context.Context, a Approval) (Answer, error)
	// then, when set, decides after the rules let a call run (Options.Gate).
	then kernel.Gate
	// mode is the permission mode ("" is ModeDefault), modeFrom the file that set it.
	mode, modeFrom string
}

// Approval is a call an "ask" permission rule holds, as [Options].Approve is asked about it.
type Approval struct {
	// Tool is the tool's name; Args the call's arguments (JSON, as the model sent them).
	Tool string
	Args json.RawMessage
	// Part is what the rule matched: the simple command (bash) or the path (file tools).
	Part string
	// Rule is the rule as written.
	Rule string
}

// Answer is the user's answer to an [Approval].
type Answer struct {
	Allow bool
	// Reason, for a denial, is the user's own words; they reach the model with the refusal.
	Reason string
}

// needsApproval is an ask refusal nobody could answer: its text is the policy's, and it
// matches both the *refusal.Error and kernel.ErrNeedsApproval.
type needsApproval struct{ err error }

func (e *needsApproval) Error() string   { return e.err.Error() }
func (e *needsApproval) Unwrap() []error { return []error{e.err, kernel.ErrNeedsApproval} }

// Check implements kernel.Gate.
func (g *permissionGate) Check(ctx context.Context, call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
	d := g.policy.Decide(spec.Name, args)
	if d.Verdict == policy.Deny {
		return d.Err()
	}
	if g.mode == ModePlan && spec.Replay != tool.ReplaySafe {
		return &refusal.Error{Code: CodePlanMode, Message: fmt.Sprintf(
			"the permission mode is plan (permissions.defaultMode in %s): only tools that change nothing run, and %s may change something; describe the change you would make instead", g.modeFrom, spec.Name)}
	}
	if d.Verdict == policy.Ask && (g.mode == ModeBypass || g.mode == ModeAcceptEdits && (spec.Name == policy.ToolWrite || spec.Name == policy.ToolEdit)) {
		d.Verdict = policy.Allow // the mode answers the ask rule; deny rules were applied above
	}
	switch d.Verdict {
	case policy.Ask:
		if g.mode == ModeDontAsk {
			return &needsApproval{err: d.Err()}
		}
		if g.approve != nil {
			if err := g.approved(ctx, spec.Name, args, d); err != nil {
				return err
			}
			break
		}
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
	if g.then != nil {
		return g.then.Check(ctx, call, spec, args)
	}
	return nil
}

// approved asks Options.Approve about a call an ask rule holds.
func (g *permissionGate) approved(ctx context.Context, name string, args json.RawMessage, d policy.Decision) error {
	a, err := g.approve(ctx, Approval{Tool: name, Args: args, Part: d.Part, Rule: d.Rule})
	if err != nil {
		return &needsApproval{err: &refusal.Error{Code: policy.CodeApprovalRequired, Message: d.Reason, Err: err}}
	}
	if a.Allow {
		return nil
	}
	msg := fmt.Sprintf("the user declined %s (rule %q); do not retry it: choose another approach, or ask the user what to do", d.Part, d.Rule)
	if a.Reason != "" {
		msg = fmt.Sprintf("the user declined %s (rule %q), saying: %s", d.Part, d.Rule, a.Reason)
	}
	return &refusal.Error{Code: policy.CodeApprovalRequired, Message: msg}
}

// newPolicy compiles the merged permission rules for a run in the workspace dir of the
// project root. Besides pathrule.DefaultProtected (relative to the workspace), writes may never
// touch $REIN_HOME (settings, trust decisions, sessions) or the project's .git and .rein when
// the workspace is below the project root, and nothing may read $REIN_HOME (credentials,
// trust decisions, sessions), wherever it lies — except the bash tool's full-output files
// in a session's directory and the skills in $REIN_HOME/skills.
func newPolicy(rules policy.Rules, dir, root, home string, roots ...string) (*policy.Policy, error) {
	protected := append([]string(nil), pathrule.DefaultProtected...)
	ticket := ticketWorkspace(home, dir)
	for _, p := range []string{home, filepath.Join(root, ".git"), filepath.Join(root, ".rein")} {
		if p == home && ticket {
			continue // the workspace itself is below home: see ticketWorkspace
		}
		if p != "" && filepath.IsAbs(p) {
			protected = append(protected, pathrule.EscapeGlob(filepath.ToSlash(p)))
		}
	}
	var readProtected, readExempt []string
	if home != "" && filepath.IsAbs(home) {
		h := pathrule.EscapeGlob(filepath.ToSlash(home))
		readProtected = []string{h}
		// The bash tool spills full outputs into the session's directory and tells the
		// model to read them there; the skills index lists $REIN_HOME/skills.
		readExempt = []string{h + "/sessions/*/*/rein-bash-*.log", h + "/skills"}
		if ticket {
			readExempt = append(readExempt, pathrule.EscapeGlob(filepath.ToSlash(dir)))
		}
	}
	pol, err := policy.New(policy.Config{Rules: rules, Dir: dir, Roots: roots, Protected: protected, ReadProtected: readProtected, ReadExempt: readExempt})
	if err != nil {
		return nil, fmt.Errorf("%w: permission rules: %w", ErrConfig, err)
	}
	return pol, nil
}

// pathGuard is the workspace's tool.Guard over the permission rules: the file tools and grep
// ask it about every path they open or list, by its real path, so a rule holds through
// symbolic links and inside directory searches, not only for the path a call names.
type pathGuard struct{ policy *policy.Policy }

// Read implements tool.Guard. With read(…) deny or ask rules in force, a file with more than
// one hard link is refused too: its other names are unknown, and one may be denied (a link
// to a .env, or to a file outside the workspace).
func (g pathGuard) Read(rel string, named bool, links uint64) error {
	if err := judged(g.policy.DecidePath(policy.OpRead, rel), named); err != nil {
		return err
	}
	if links > 1 && g.policy.DeniesReads() {
		return &refusal.Error{Code: pathrule.CodeHardLinked, Message: fmt.Sprintf(
			"%s has %d hard links: its other names are unknown and may be denied by the read rules, so rein does not read it while read rules deny paths; ask the user to make it a plain copy, or to change the rules",
			rel, links)}
	}
	return nil
}

// Write implements tool.Guard.
func (g pathGuard) Write(rel string, named bool) error {
	return judged(g.policy.DecidePath(policy.OpWrite, rel), named)
}

// judged turns a decision about a path a tool reached into its refusal: Deny always; Ask
// only when the path is not the one the call named (the gate asked about that one), since
// nobody can be asked about a file met through a link or in a directory search.
func judged(d policy.Decision, named bool) error {
	switch {
	case d.Verdict == policy.Deny:
		return d.Err()
	case d.Verdict == policy.Ask && !named:
		return &refusal.Error{Code: d.Code, Message: fmt.Sprintf("%s (it was reached through a symbolic link or a directory search, where the user cannot be asked: name %s itself to be asked)", d.Reason, d.Part)}
	}
	return nil
}

// ticketWorkspace reports whether the workspace dir is a delivery run's ticket worktree: a
// directory below $REIN_HOME/worktrees, the one place under rein's home an agent works in.
// Its file tools are confined to it (os.Root), so home's write protection would forbid
// only the workspace itself: it is left out, and the workspace is exempt from home's read
// protection; the rest of home stays unreadable to commands, as everywhere.
func ticketWorkspace(home, dir string) bool {
	if home == "" || dir == "" {
		return false
	}
	h, err := filepath.Abs(home)
	if err != nil {
		return false
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	// Without a worktrees directory no existing directory resolves below it: two stats
	// instead of resolving both paths component by component (most homes have none).
	if _, err := os.Stat(filepath.Join(h, "worktrees")); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(d); err == nil {
			return false
		}
	}
	if r, err := filepath.EvalSymlinks(h); err == nil {
		h = r
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	rel, err := filepath.Rel(filepath.Join(h, "worktrees"), d)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}
