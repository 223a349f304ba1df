package loop

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/ledger"
)

// Runs drives the delivery run a loop's goal names. rein's composition of commands implements
// it with the delivery-run engine — the calls `rein run next` (and `rein run resume`, for a
// run a crash interrupted) make — so a loop never advances a run by a second path.
type Runs interface {
	// Advance moves run id on by one stage.
	Advance(ctx context.Context, id string) error
	// State reports run id as `rein run status` does, writing nothing.
	State(id string) (RunState, error)
}

// RunState is a delivery run as a loop sees it.
type RunState struct {
	State         string // the run's state: ready, waiting_for_human, blocked, interrupted, completed, aborted
	Stage         string
	DeliveryReady bool
	// Person says what a person must do before the run can go on ("" when nothing): a gate
	// to decide, a clarification to answer, a blocker's recovery.
	Person string
}

// Reasons of a loop whose goal is a delivery run.
const (
	ReasonRunWaiting = "run_waiting" // the run waits for a person; so does the loop
	ReasonRunDecided = "run_decided" // the person decided; the loop is ready
	ReasonRunFailed  = "run_failed"  // the run cannot go on (aborted, or its engine failed)
)

// goalRun reports whether the contract's goal is a delivery run (a delivery_run check).
func goalRun(n Normalized) bool {
	return slices.ContainsFunc(n.Verification, func(v Verification) bool { return v.DeliveryRun != "" })
}

// checkGoalRun validates a loop start against its goal: a delivery-run goal needs the run's id
// and the engine (env.Runs), and the run must exist and not be finished.
func checkGoalRun(env Env, n Normalized, run string) error {
	switch {
	case !goalRun(n) && run != "":
		return fmt.Errorf("%w: --run %s, but no verification of the contract is a delivery run (delivery_run: delivery-ready)", ErrInvalidContract, run)
	case !goalRun(n):
		return nil
	case run == "":
		return fmt.Errorf("%w: the contract's goal is a delivery run: name it with --run RUN (rein run start prints its id)", ErrInvalidContract)
	case env.Runs == nil:
		return fmt.Errorf("%w: a delivery run as a loop's goal needs the delivery-run engine", ErrUnsupported)
	}
	st, err := env.Runs.State(run)
	if err != nil {
		return fmt.Errorf("%w: delivery run %s: %w", ErrInvalidContract, run, err)
	}
	if st.State == "aborted" {
		return fmt.Errorf("%w: delivery run %s was aborted", ErrInvalidContract, run)
	}
	return nil
}

// runGoalRound runs round n+1 of a loop whose goal is a delivery run: the round advances the
// run by one stage (no model session of the loop's own: the run's stages have theirs), then
// rein verifies — the delivery check is the run's state, the command checks run as in any
// round. A run waiting for a person makes the loop wait too (waiting_for_human, run_waiting);
// the loop completes only when the run is at Delivery Ready and every check passes.
func runGoalRound(ctx context.Context, env Env, l *ledger.Ledger, v *view) (string, error) {
	n := v.Rounds + 1
	id := v.Started.Run
	before, err := env.Runs.State(id)
	if err != nil {
		return "", fmt.Errorf("delivery run %s: %w", id, err)
	}
	env.crash("round-start")
	if _, err := l.Append(ledger.Entry{Kind: KindRoundStart, Body: roundStart{Round: n}}); err != nil {
		return "", err
	}
	env.crash("session")
	start := env.now()
	end := roundEnd{Round: n, Claim: ClaimNone}
	var runErr error
	if !before.DeliveryReady && before.Person == "" {
		runErr = env.Runs.Advance(ctx, id)
	}
	if ctx.Err() != nil {
		return "", ctx.Err() // the round stays open; the next run closes it as interrupted
	}
	end.ElapsedMs = env.now().Sub(start).Milliseconds()
	env.crash("verify")
	end.Verification = verifyGoal(ctx, env, v)
	env.crash("verified")
	st, err := env.Runs.State(id)
	if err != nil {
		return "", fmt.Errorf("delivery run %s: %w", id, err)
	}
	causes := goalEnd(v, n, st, runErr, &end)
	cp := Checkpoint{Round: n, ContractDigest: v.Started.ContractDigest, Verification: end.Verification, RootCauses: causes,
		CompletedScope: fmt.Sprintf("delivery run %s: %s -> %s", id, before.Stage, st.Stage), NextStep: goalNext(id, st)}
	return endRound(env, l, v, v.Started.Workspace, cp, end)
}

// goalEnd decides how goal round n ends from the run's state after it (st) and rein's
// verification (end.Verification): a run waiting for a person makes the loop wait; an
// aborted run, or an engine failure with failing checks, blocks it; otherwise the table
// decides. It returns the round's root causes.
func goalEnd(v *view, n int, st RunState, runErr error, end *roundEnd) []RootCause {
	id := v.Started.Run
	causes := rootCauses(v.Ends, n, end.Verification)
	rule := v.Started.Contract.Failure
	switch {
	case st.Person != "" && !st.DeliveryReady:
		end.State, end.Reason, end.Detail = StateWaitingForHuman, ReasonRunWaiting, runWaits(id, v.ID, st)
	case st.State == "aborted" || runErr != nil && !allPassed(end.Verification):
		end.State, end.Reason, end.Detail = StateBlocked, ReasonRunFailed, runFailure(id, st, runErr)
	default:
		end.State, end.Reason, end.Detail = decide(outcome{Verification: end.Verification, Claim: ClaimNone, Repeated: repeated(causes, rule, n), Rule: rule})
	}
	return causes
}

// goalNext is a goal round's next step: advance the run, unless it is at Delivery Ready.
func goalNext(run string, st RunState) string {
	if st.DeliveryReady {
		return ""
	}
	return "advance delivery run " + run + " from " + st.Stage
}

// verifyGoal runs every check of the contract: the command checks as rein's approved
// commands, a delivery check as the run's state (passed only at Delivery Ready).
func verifyGoal(ctx context.Context, env Env, v *view) []VerificationResult {
	var out []VerificationResult
	for _, c := range v.Started.Contract.Verification {
		if c.DeliveryRun == "" {
			out = append(out, verify(ctx, []Verification{c}, v.Started.Workspace)...)
			continue
		}
		r := VerificationResult{ID: c.ID, Passed: true}
		st, err := env.Runs.State(v.Started.Run)
		text := ""
		switch {
		case err != nil:
			text = "delivery run " + v.Started.Run + ": " + err.Error()
		case !st.DeliveryReady:
			text = fmt.Sprintf("delivery run %s is %s at stage %s, not at Delivery Ready", v.Started.Run, st.State, st.Stage)
		}
		if text != "" {
			r.Passed, r.ExitCode, r.Tail = false, 1, text
			r.Fingerprint, r.Signature = Fingerprint(c.ID, 1, text)
		}
		out = append(out, r)
	}
	return out
}

// verifyAny is the verification of a round of either kind.
func verifyAny(ctx context.Context, env Env, v *view) []VerificationResult {
	if goalRun(v.Started.Contract) && env.Runs != nil {
		return verifyGoal(ctx, env, v)
	}
	return verify(ctx, v.Started.Contract.Verification, v.Started.Workspace)
}

func runWaits(run, loopID string, st RunState) string {
	return fmt.Sprintf("delivery run %s waits for a person at %s: %s; then rein loop run %s", run, st.Stage, st.Person, loopID)
}

func runFailure(run string, st RunState, err error) string {
	if st.State == "aborted" {
		return "delivery run " + run + " was aborted"
	}
	return fmt.Sprintf("delivery run %s could not advance from %s: %s", run, st.Stage, strings.TrimSpace(err.Error()))
}

// runDecided looks at a loop waiting on its delivery run: once the person decided (the run no
// longer waits for one), the loop is recorded ready (run_decided). It reports whether the
// loop may go on.
func runDecided(env Env, l *ledger.Ledger, v *view) (bool, error) {
	if env.Runs == nil {
		return false, nil
	}
	st, err := env.Runs.State(v.Started.Run)
	if err != nil {
		return false, fmt.Errorf("delivery run %s: %w", v.Started.Run, err)
	}
	if st.Person != "" && !st.DeliveryReady {
		return false, nil
	}
	if err := appendState(l, StateReady, ReasonRunDecided, fmt.Sprintf("delivery run %s is %s at %s", v.Started.Run, st.State, st.Stage)); err != nil {
		return false, err
	}
	v.State, v.Reason = StateReady, ReasonRunDecided
	return true, nil
}
