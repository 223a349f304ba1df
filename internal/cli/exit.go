package cli

import (
	"context"
	"errors"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/system"
)

// Exit codes. They are documented in the README; keep the two in step.
const (
	ExitOK          = 0   // the run completed
	ExitInternal    = 1   // an unexpected failure, including a failure to record the session or a record the session refused as invalid
	ExitUsage       = 2   // bad flags, arguments or configuration
	ExitModel       = 3   // the model or provider failed (after retries)
	ExitBlocked     = 4   // blocked by policy (trust, permissions, a hook)
	ExitBudget      = 5   // a budget (--max-turns, --max-cost) was exhausted
	ExitCheckFailed = 6   // a check the command exists to make failed (e.g. rein demo's tests)
	ExitSession     = 7   // the session ledger cannot be used: corrupt, locked, rolled back, or a write failed
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

// exitTable maps errors to exit codes; the first match wins.
var exitTable = []struct {
	match func(error) bool
	code  int
}{
	{func(err error) bool { return errors.Is(err, kernel.ErrAborted) || errors.Is(err, context.Canceled) }, ExitInterrupted},
	{func(err error) bool { _, ok := errors.AsType[*kernel.BudgetError](err); return ok }, ExitBudget},
	{func(err error) bool {
		return errors.Is(err, ErrBlocked) || errors.Is(err, kernel.ErrNeedsApproval) || errors.Is(err, kernel.ErrHookBlocked) ||
			errors.Is(err, system.ErrTrustRequired) || errors.Is(err, delivery.ErrBlocked) || errors.Is(err, delivery.ErrNotApproved)
	}, ExitBlocked},
	{func(err error) bool {
		for _, s := range []error{ledger.ErrCorrupt, ledger.ErrLocked, ledger.ErrRollback, ledger.ErrIncomplete,
			ledger.ErrFaulted, ledger.ErrTornTail, ledger.ErrUnsupportedVersion, session.ErrBusy} {
			if errors.Is(err, s) {
				return true
			}
		}
		return false
	}, ExitSession},
	// A record the session refused to write is rein's bug; the session itself is intact.
	{func(err error) bool { return errors.Is(err, session.ErrInvalidRecord) }, ExitInternal},
	{func(err error) bool { return errors.Is(err, ErrCheckFailed) }, ExitCheckFailed},
	{func(err error) bool { _, ok := errors.AsType[*llm.Error](err); return ok }, ExitModel},
	{func(err error) bool {
		return errors.Is(err, ErrUsage) || errors.Is(err, system.ErrConfig) || errors.Is(err, llm.ErrBadModelsFile) ||
			errors.Is(err, system.ErrAuthPermissions) || errors.Is(err, system.ErrNoSession) || errors.Is(err, session.ErrBadForkPoint) ||
			errors.Is(err, delivery.ErrInvalidProfile) || errors.Is(err, delivery.ErrNoProfile) || errors.Is(err, delivery.ErrNoRun) ||
			errors.Is(err, delivery.ErrUsage) || errors.Is(err, delivery.ErrFinished) || errors.Is(err, delivery.ErrNotRunnable)
	}, ExitUsage},
}

// ExitCode returns the documented exit code for err.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	for _, e := range exitTable {
		if e.match(err) {
			return e.code
		}
	}
	return ExitInternal
}
