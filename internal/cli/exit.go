package cli

import (
	"context"
	"errors"
	"slices"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/lease"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/loop"
	"github.com/reinhq/rein/internal/mcp"
	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/telemetry"
)

// Exit codes. They are documented in the README; keep the two in step.
const (
	ExitOK          = 0   // the run completed
	ExitInternal    = 1   // an unexpected failure: a bug in rein (a record the session refused as invalid), or a failure no other code names
	ExitUsage       = 2   // bad flags, arguments or configuration
	ExitModel       = 3   // the model or provider failed (after retries)
	ExitBlocked     = 4   // blocked by policy (trust, permissions, a hook)
	ExitBudget      = 5   // a budget (--max-turns, --max-cost) was exhausted
	ExitCheckFailed = 6   // a check the command exists to make failed (e.g. rein demo's tests)
	ExitSession     = 7   // the session ledger (or a run's recorded artifacts) cannot be used: corrupt, locked, rolled back, or a write failed
	ExitInterrupted = 130 // interrupted (SIGINT, SIGTERM, abort)
)

// Sentinel errors of the cli itself.
var (
	// ErrUsage marks bad command-line input.
	ErrUsage = errors.New("usage error")
	// ErrBlocked marks a refusal by policy.
	ErrBlocked = errors.New("blocked by policy")
	// ErrCheckFailed marks a failed check.
	ErrCheckFailed = errors.New("check failed")
)

// exitTable maps conditions to exit codes. ExitCode walks an error's chain from the outside in
// and the first error that one of these names decides, so the condition a caller wrapped
// around a cause wins over the cause (rein session verify's failed check over the torn tail it
// found; a usage error over the malformed file behind it). Only an interruption anywhere in
// the chain wins over everything. Each row's conditions are listed in the README's table. (A
// function, not a package-level table: the sentinels are other packages' variables, which a
// table would copy in a package initializer at every start.)
func exitTable() []exitRow {
	return []exitRow{
		{code: ExitBudget, typed: func(err error) bool { _, ok := err.(*kernel.BudgetError); return ok }},
		{code: ExitBlocked, sentinels: []error{ErrBlocked, kernel.ErrNeedsApproval, kernel.ErrHookBlocked,
			kernel.ErrCompactionCancelled, system.ErrTrustRequired, delivery.ErrBlocked, delivery.ErrNotApproved, delivery.ErrNotRelockable, delivery.ErrAuditFailed, loop.ErrBlocked, loop.ErrNotRelockable}},
		{code: ExitCheckFailed, sentinels: []error{ErrCheckFailed}},
		// A record the session refused to write is rein's bug; the session itself is intact. So is a
		// stage request without the prefix its context hook cuts at: the hook failed closed.
		{code: ExitInternal, sentinels: []error{session.ErrInvalidRecord, contextpack.ErrPrefixMissing}},
		{code: ExitSession, sentinels: []error{ledger.ErrCorrupt, ledger.ErrLocked, ledger.ErrRollback, ledger.ErrIncomplete,
			ledger.ErrFaulted, ledger.ErrTornTail, ledger.ErrUnsupportedVersion, ledger.ErrBlobDigest, session.ErrBusy, system.ErrSessionGone,
			artifact.ErrMismatch, artifact.ErrCorrupt, artifact.ErrNotFound, delivery.ErrRunning, loop.ErrRunning, lease.ErrHeld}},
		{code: ExitModel, typed: func(err error) bool { _, ok := err.(*llm.Error); return ok }},
		{code: ExitUsage, sentinels: []error{ErrUsage, system.ErrConfig, system.ErrAuthPermissions, system.ErrNoSession,
			telemetry.ErrConfig, sandbox.ErrUnavailable, llm.ErrBadModelsFile, session.ErrBadForkPoint,
			kernel.ErrNothingToContinue, system.ErrNothingPending, contextpack.ErrNothingToCompact, gitx.ErrNotRepo, gitx.ErrNoGit,
			delivery.ErrInvalidProfile, delivery.ErrNoProfile, delivery.ErrNoRun, delivery.ErrUsage, delivery.ErrFinished,
			delivery.ErrNotRunnable, mcp.ErrServer, mcp.ErrUnsetVariable,
			loop.ErrInvalidContract, loop.ErrNoLoop, loop.ErrFinished, loop.ErrUnsupported, loop.ErrNoGate, loop.ErrNotDrifted,
			loop.ErrTrigger,
			artifact.ErrMalformed, artifact.ErrInvalidDigest, artifact.ErrInvalidReference, artifact.ErrOutsideRoots,
			artifact.ErrMissing, artifact.ErrNotRegular, artifact.ErrUnreadable, artifact.ErrTooLarge, artifact.ErrInvalidGraph}},
	}
}

type exitRow struct {
	code      int
	sentinels []error
	typed     func(error) bool // the error itself is of a type that decides
}

// ExitCode returns the documented exit code for err.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, kernel.ErrAborted) || errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	code, table := ExitInternal, exitTable()
	walk(err, func(e error) bool {
		for _, row := range table {
			if row.typed != nil && row.typed(e) || slices.ContainsFunc(row.sentinels, func(s error) bool { return is(e, s) }) {
				code = row.code
				return false
			}
		}
		return true
	})
	return code
}

// is reports whether e itself (not what it wraps) is the sentinel s.
func is(e, s error) bool {
	if e == s {
		return true
	}
	m, ok := e.(interface{ Is(error) bool })
	return ok && m.Is(s)
}

// walk calls visit on err and the errors it wraps, depth first, outermost first, until visit
// returns false. It reports whether the walk went to the end.
func walk(err error, visit func(error) bool) bool {
	if err == nil {
		return true
	}
	if !visit(err) {
		return false
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walk(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, c := range u.Unwrap() {
			if !walk(c, visit) {
				return false
			}
		}
	}
	return true
}
