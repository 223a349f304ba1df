package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/lease"
	"github.com/reinhq/rein/internal/ledger"
)

// Agents builds the agent of every round: rein's composition root implements it.
type Agents interface {
	Agent(ctx context.Context, spec agentspec.Spec) (agentspec.Agent, error)
}

// Env is what a loop needs from outside.
type Env struct {
	Home   string           // $REIN_HOME; loop ledgers live in Home/loops/<id>
	Agents Agents           // the rounds' agents
	Now    func() time.Time // nil: time.Now
	// Sleep waits between rounds of an "every" trigger (nil: a timer honouring ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// SessionFS is the round sessions' ledger filesystem (nil: the OS); a test seam.
	SessionFS ledger.FS
	// Runs drives the delivery run of a loop whose goal is one (nil: none can be).
	Runs Runs
	// Crash is called at named points of a round and of an approval (a test seam: the crash
	// matrix kills the process there).
	Crash func(point string)
}

func (e Env) crash(point string) {
	if e.Crash != nil {
		e.Crash(point)
	}
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e Env) sleep(ctx context.Context, d time.Duration) error {
	if e.Sleep != nil {
		return e.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

// StartOptions are the inputs of [Start].
type StartOptions struct {
	File      string // the contract file
	Workspace string // the directory rounds work in (absolute)
	Trigger   string // the --trigger flag: it must say what the contract's trigger says ("" takes the contract's)
	Model     ModelRef
	Run       string // the delivery run a delivery_run goal names
}

// Start validates the contract, locks it (its digest in the new loop ledger's header) and
// returns the loop's id; the loop is ready.
func Start(env Env, o StartOptions) (string, error) {
	file, err := filepath.Abs(o.File)
	if err != nil {
		return "", err
	}
	c, err := LoadContract(file)
	if err != nil {
		return "", err
	}
	trig, err := startTrigger(c.Normalized.Trigger, o.Trigger, o.Workspace)
	if err != nil {
		return "", err
	}
	if err := checkGoalRun(env, c.Normalized, o.Run); err != nil {
		return "", err
	}
	if o.Model.Provider == "" && !goalRun(c.Normalized) {
		return "", fmt.Errorf("%w: the rounds need a model provider (rein loop start --provider NAME)", ErrInvalidContract)
	}
	id := newID(env.now())
	l, err := ledger.Create(loopDir(env.Home, id), ledger.Header{Type: ledger.TypeLoop, ID: id,
		Bindings: map[string]string{"contract": string(c.Digest)}}, ledger.Options{})
	if err != nil {
		return "", fmt.Errorf("create loop %s: %w", id, err)
	}
	defer l.Close()
	_, err = l.Append(ledger.Entry{Kind: KindStarted, Body: started{File: file, Workspace: o.Workspace,
		Contract: c.Normalized, ContractDigest: c.Digest, Trigger: trig, Model: o.Model, Run: o.Run}})
	return id, err
}

func newID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "loop-" + now.Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// withLease runs f holding loop id's lease; a live holder refuses with ErrRunning.
func withLease(env Env, id, cmd string, f func(l *ledger.Ledger) error) error {
	if _, err := readView(env.Home, id); err != nil {
		return err
	}
	stale, release, err := lease.Acquire(filepath.Join(loopDir(env.Home, id), "lease.json"), cmd, env.now())
	var held *lease.HeldError
	if errors.As(err, &held) {
		return fmt.Errorf("%w: loop %s: %w; wait for it, or look with `rein loop status %s`", ErrRunning, id, held, id)
	}
	if err != nil {
		return fmt.Errorf("loop %s: %w", id, err)
	}
	defer release()
	l, err := openLoop(env.Home, id)
	if err != nil {
		return err
	}
	defer l.Close()
	if stale != nil {
		if _, err := l.Append(ledger.Entry{Kind: KindLeaseTaken, Body: stale}); err != nil {
			return err
		}
	}
	return f(l)
}

// Run runs rounds of loop id until its state is other than ready, and returns that state.
func Run(ctx context.Context, env Env, id string) (string, error) {
	state := ""
	err := withLease(env, id, "run", func(l *ledger.Ledger) error {
		for {
			v, err := readView(env.Home, id)
			if err != nil {
				return err
			}
			ok, err := precheck(ctx, env, l, v)
			if err != nil || !ok {
				v, _ = readView(env.Home, id)
				state = v.State
				return err
			}
			if v.Started.Trigger.Kind == "every" && v.Rounds > 0 {
				d, _ := time.ParseDuration(v.Started.Trigger.Every)
				if err := env.sleep(ctx, time.Until(v.LastRoundAt.Add(d))); err != nil {
					return err
				}
			}
			if _, err := l.Append(ledger.Entry{Kind: KindTrigger, Body: runFiring(v, env.now())}); err != nil {
				return err
			}
			state, err = nextRound(ctx, env, l, v)
			if err != nil || state != StateReady {
				return err
			}
		}
	})
	return state, err
}

// nextRound takes the resume steps before the next round (prepare) and, when they hold,
// runs the round: one stage of the goal's delivery run, or a model round. It returns the
// loop's state afterwards. Every trigger (rein loop run, rein loop serve) goes through it.
func nextRound(ctx context.Context, env Env, l *ledger.Ledger, v *view) (string, error) {
	p, ok, err := prepare(env, l, v, v.Rounds+1)
	if err != nil || !ok {
		if now, verr := readView(env.Home, v.ID); verr == nil {
			return now.State, err
		}
		return "", err
	}
	if goalRun(v.Started.Contract) {
		return runGoalRound(ctx, env, l, v)
	}
	return runRound(ctx, env, l, v, p)
}

// precheck settles what must hold before a round, in order: a finished loop refuses; the
// contract is the locked one (drift blocks; restoring it or a relock lifts); an interrupted
// round is closed (closeInterrupted) and an interrupted approval settled (settleApprovals);
// a pending gate waits (or times out); a blocked loop stays; the budget has room. It
// reports whether a round may run.
func precheck(ctx context.Context, env Env, l *ledger.Ledger, v *view) (bool, error) {
	if v.State == StateCompleted || v.State == StateAborted {
		return false, fmt.Errorf("%w: loop %s is %s", ErrFinished, v.ID, v.State)
	}
	if drift := contractDrift(v); drift != "" {
		if v.Reason != ReasonContractDrift {
			if err := appendState(l, StateBlocked, ReasonContractDrift, drift); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	if v.Reason == ReasonContractDrift {
		s := v.afterDrift(ReasonDriftLifted, "the contract file matches the locked digest again")
		if _, err := l.Append(ledger.Entry{Kind: KindState, Body: s}); err != nil {
			return false, err
		}
		v.State, v.Reason = s.State, s.Reason
	}
	if v.Open > 0 || len(v.Approving) > 0 {
		if v.Open > 0 {
			if err := closeInterrupted(ctx, env, l, v); err != nil {
				return false, err
			}
		} else if err := settleApprovals(l, v); err != nil {
			return false, err
		}
		nv, err := readView(env.Home, v.ID)
		if err != nil {
			return false, err
		}
		*v = *nv
		if v.State != StateReady {
			return false, nil
		}
	}
	if v.State == StateWaitingForHuman && v.Reason == ReasonRunWaiting {
		if _, err := runDecided(env, l, v); err != nil {
			return false, err
		}
	}
	switch v.State {
	case StateWaitingForHuman:
		d, _ := time.ParseDuration(v.Started.Contract.GateTimeout)
		if env.now().After(v.WaitingFrom.Add(d)) {
			return false, appendState(l, StateBlocked, ReasonGateTimeout, fmt.Sprintf("no decision on %d gate(s) within %s; nothing was run", len(v.Pending), d))
		}
		return false, nil
	case StateBlocked:
		// A refused identical retry is looked at again (see refuseRetry), and so is a failed
		// precondition (see prepare).
		if v.Reason != ReasonIdenticalRetry && v.Reason != ReasonPrecondition {
			return false, nil
		}
	}
	if why := exhausted(v); why != "" {
		return false, appendState(l, StateBlocked, ReasonBudgetExhausted, why)
	}
	return true, nil
}

// contractDrift says how the contract file differs from the locked one, or "".
func contractDrift(v *view) string {
	c, err := LoadContract(v.Started.File)
	if err != nil {
		return fmt.Sprintf("the contract file %s no longer reads as the locked contract: %v; restore it", v.Started.File, err)
	}
	if c.Digest != v.Started.ContractDigest {
		return fmt.Sprintf("the contract file %s changed (%s): digest %s, locked %s; restore it, or adopt it with rein loop relock %s --approver WHO",
			v.Started.File, strings.Join(changedFields(v.Started.Contract, c.Normalized), ", "), c.Digest, v.Started.ContractDigest, v.ID)
	}
	return ""
}

// exhausted names the budget a new round would exceed, or "".
func exhausted(v *view) string {
	b := v.Budget
	switch {
	case v.Rounds >= b.Rounds:
		return fmt.Sprintf("rounds: %d of %d used", v.Rounds, b.Rounds)
	case b.Tokens > 0 && v.Tokens >= b.Tokens:
		return fmt.Sprintf("tokens: %d of %d used", v.Tokens, b.Tokens)
	case b.CostUSD > 0 && v.CostUSD >= b.CostUSD:
		return fmt.Sprintf("cost_usd: %.4f of %.4f used", v.CostUSD, b.CostUSD)
	}
	if d, err := time.ParseDuration(b.Elapsed); err == nil && b.Elapsed != "" && time.Duration(v.ElapsedMs)*time.Millisecond >= d {
		return fmt.Sprintf("elapsed: %s of %s used", time.Duration(v.ElapsedMs)*time.Millisecond, d)
	}
	return ""
}

// Abort ends loop id for good.
func Abort(env Env, id, reason string) error {
	return withLease(env, id, "abort", func(l *ledger.Ledger) error {
		v, err := readView(env.Home, id)
		if err != nil {
			return err
		}
		if v.State == StateCompleted || v.State == StateAborted {
			return fmt.Errorf("%w: loop %s is %s", ErrFinished, id, v.State)
		}
		return appendState(l, StateAborted, ReasonAborted, reason)
	})
}

// Raise replaces the budget's named limits (recorded with its approver); a loop blocked by
// its budget is ready again when the new budget has room.
func Raise(env Env, id string, set map[string]string, approver string) error {
	if approver == "" {
		return fmt.Errorf("%w: raising a budget needs an approver", ErrInvalidContract)
	}
	return withLease(env, id, "raise", func(l *ledger.Ledger) error {
		v, err := readView(env.Home, id)
		if err != nil {
			return err
		}
		if v.State == StateCompleted || v.State == StateAborted {
			return fmt.Errorf("%w: loop %s is %s", ErrFinished, id, v.State)
		}
		nb, err := raised(v.Budget, set)
		if err != nil {
			return err
		}
		if _, err := l.Append(ledger.Entry{Kind: KindBudget, Body: budgetRaise{Old: v.Budget, New: nb, Approver: approver}}); err != nil {
			return err
		}
		v.Budget = nb
		if v.Reason == ReasonBudgetExhausted && exhausted(v) == "" {
			return appendState(l, StateReady, ReasonBudgetRaised, "raised by "+approver)
		}
		return nil
	})
}

var budgetKeys = []string{"rounds", "tokens", "cost_usd", "elapsed"}

func raised(b Budget, set map[string]string) (Budget, error) {
	for k, val := range set {
		var err error
		switch k {
		case "rounds":
			_, err = fmt.Sscan(val, &b.Rounds)
		case "tokens":
			_, err = fmt.Sscan(val, &b.Tokens)
		case "cost_usd":
			_, err = fmt.Sscan(val, &b.CostUSD)
		case "elapsed":
			_, err = time.ParseDuration(val)
			b.Elapsed = val
		default:
			return b, fmt.Errorf("%w: unknown budget %q (one of %v)", ErrInvalidContract, k, budgetKeys)
		}
		if err != nil {
			return b, fmt.Errorf("%w: budget %s=%q: %w", ErrInvalidContract, k, val, err)
		}
	}
	if b.Rounds <= 0 || b.Tokens < 0 || b.CostUSD < 0 {
		return b, fmt.Errorf("%w: a budget must stay positive", ErrInvalidContract)
	}
	return b, nil
}
