package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// States of a loop. Every round ends in exactly one of ready, waiting_for_human, blocked or
// completed; running is a round in progress (a live lease); aborted is a person's end.
const (
	StateReady           = "ready"
	StateRunning         = "running"
	StateWaitingForHuman = "waiting_for_human"
	StateBlocked         = "blocked"
	StateCompleted       = "completed"
	StateAborted         = "aborted"
)

// Reasons recorded with a state.
const (
	ReasonStarted            = "started"
	ReasonVerificationPassed = "verification_passed"
	ReasonVerificationFailed = "verification_failed"
	ReasonClaimContradicted  = "claim_contradicted"
	ReasonSameRootCause      = "same_root_cause"
	ReasonBudgetExhausted    = "budget_exhausted"
	ReasonBudgetRaised       = "budget_raised"
	ReasonHumanGate          = "human_gate"
	ReasonGateApproved       = "gate_approved"
	ReasonGateRejected       = "gate_rejected"
	ReasonGateTimeout        = "gate_timeout"
	ReasonContractDrift      = "contract_drift"
	ReasonDriftLifted        = "drift_lifted"
	ReasonStaleContext       = "stale_context"
	ReasonModelFailed        = "model_failed"
	ReasonCheckpointSecret   = "checkpoint_secret"
	ReasonInterrupted        = "interrupted"
	ReasonAborted            = "aborted"
	ReasonIdenticalRetry     = "identical_retry"
	ReasonRetryLifted        = "retry_lifted"
)

// Record kinds of the loop ledger.
const (
	KindStarted     = "loop.started"
	KindState       = "loop.state"
	KindTrigger     = "loop.trigger"
	KindRoundStart  = "round.started"
	KindCheckpoint  = "loop.checkpoint"
	KindRoundEnd    = "round.ended"
	KindGateDecided = "gate.decided"
	KindBudget      = "budget.raised"
	KindLeaseTaken  = "loop.lease.taken_over"
)

// LoopsDir is the directory of loop ledgers under $REIN_HOME.
const LoopsDir = "loops"

// started is the body of loop.started.
type started struct {
	File           string          `json:"file"`
	Workspace      string          `json:"workspace"`
	Contract       Normalized      `json:"contract"`
	ContractDigest artifact.Digest `json:"contractDigest"`
	Trigger        Trigger         `json:"trigger"`
	Model          ModelRef        `json:"model"`
	Run            string          `json:"run,omitempty"` // the delivery run the goal names (goalrun.go)
}

// ModelRef names the rounds' model (never a key).
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	BaseURL  string `json:"baseUrl,omitempty"`
	Script   string `json:"script,omitempty"`
}

func (m ModelRef) spec() agentspec.Model {
	return agentspec.Model{Provider: m.Provider, Model: m.Model, BaseURL: m.BaseURL, Script: m.Script}
}

// stateChange is the body of loop.state: a transition outside a round.
type stateChange struct {
	State  string `json:"state"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// VerificationResult is one check of one round, as rein ran it.
type VerificationResult struct {
	ID          string   `json:"id"`
	Passed      bool     `json:"passed"`
	ExitCode    int      `json:"exitCode"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Signature   []string `json:"signature,omitempty"`
	// Tail is the output's last lines, secrets redacted (evidence for the next round).
	Tail string `json:"tail,omitempty"`
}

// roundStart is the body of round.started.
type roundStart struct {
	Round int       `json:"round"`
	Key   *RoundKey `json:"key,omitempty"`
}

// roundEnd is the body of round.ended.
type roundEnd struct {
	Round        int                  `json:"round"`
	State        string               `json:"state"`
	Reason       string               `json:"reason"`
	Detail       string               `json:"detail,omitempty"`
	Claim        string               `json:"claim"` // the model's report: done, progress, stuck, or none
	Verification []VerificationResult `json:"verification"`
	Gates        []GateRequest        `json:"gates,omitempty"`
	Tokens       int                  `json:"tokens"`
	CostUSD      float64              `json:"costUsd"`
	ElapsedMs    int64                `json:"elapsedMs"`
	Session      string               `json:"session,omitempty"`
}

// gateDecision is the body of gate.decided.
type gateDecision struct {
	ID       string `json:"id"`
	Decision string `json:"decision"` // approved, rejected
	Approver string `json:"approver"`
	Reason   string `json:"reason,omitempty"`
	ExitCode int    `json:"exitCode"`
	Tail     string `json:"tail,omitempty"`
}

// budgetRaise is the body of budget.raised.
type budgetRaise struct {
	Old      Budget `json:"old"`
	New      Budget `json:"new"`
	Approver string `json:"approver"`
}

// view is a loop's state folded from its ledger.
type view struct {
	ID          string
	Started     started
	State       string
	Reason      string
	Detail      string
	Rounds      int // rounds started
	Open        int // a round started without its end (a crash), or 0
	Tokens      int
	CostUSD     float64
	ElapsedMs   int64
	Budget      Budget
	Checkpoint  *Checkpoint
	LastEnd     *roundEnd
	Ends        []roundEnd
	Keys        map[int]RoundKey // round → its key (round.started)
	Pending     []GateRequest    // gates of the last round not yet decided
	WaitingFrom time.Time
	Decisions   []gateDecision // decided since the last round
	LastRoundAt time.Time
	Firings     int     // loop.trigger records, less the drops of queued ones
	LastFiring  *Firing // the latest of them
	// Resume and relock (resume.go, relock.go).
	PreDrift   stateChange       // the state before contract drift was recorded
	Relocks    int               // contract.relocked records
	Amendments []Amendment       // in order
	Held       []GateRequest     // gates held in the open round (gate.held)
	Approving  map[string]string // gate id → approver of an approval whose action started, undecided
}

func loopDir(home, id string) string { return filepath.Join(home, LoopsDir, id) }

// readView opens loop id read-only and folds it.
func readView(home, id string) (*view, error) {
	if !ledger.ValidID(id) {
		return nil, fmt.Errorf("%w: %q", ErrNoLoop, id)
	}
	dir := loopDir(home, id)
	if _, err := os.Stat(filepath.Join(dir, ledger.FileName)); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoLoop, id)
	}
	v := &view{ID: id}
	_, _, err := ledger.OpenReadOnly(dir, ledger.Options{Visit: v.visit})
	if err != nil {
		return nil, fmt.Errorf("loop %s: %w", id, err)
	}
	return v, nil
}

// visit folds one record.
func (v *view) visit(r ledger.Record) error {
	dec := func(x any) error {
		if err := json.Unmarshal(r.Body, x); err != nil {
			return fmt.Errorf("%w: loop ledger record %d (%s): %w", ledger.ErrCorrupt, r.Seq, r.Kind, err)
		}
		return nil
	}
	switch r.Kind {
	case ledger.KindHeader, ledger.KindRecovery, KindLeaseTaken:
	case KindTrigger:
		var f Firing
		if err := dec(&f); err != nil {
			return err
		}
		if f.Disposition != FiringDropped { // a drop is the fate of a firing counted already
			v.Firings++
		}
		v.LastFiring = &f
	case KindStarted:
		if err := dec(&v.Started); err != nil {
			return err
		}
		v.Budget, v.State, v.Reason = v.Started.Contract.Budget, StateReady, ReasonStarted
	case KindState:
		var s stateChange
		if err := dec(&s); err != nil {
			return err
		}
		if s.Reason == ReasonContractDrift && v.Reason != ReasonContractDrift {
			v.PreDrift = stateChange{State: v.State, Reason: v.Reason, Detail: v.Detail}
		}
		v.State, v.Reason, v.Detail = s.State, s.Reason, s.Detail
	case KindRoundStart:
		var s roundStart
		if err := dec(&s); err != nil {
			return err
		}
		v.Rounds++
		v.Open = v.Rounds
		if s.Key != nil {
			if v.Keys == nil {
				v.Keys = map[int]RoundKey{}
			}
			v.Keys[v.Rounds] = *s.Key
		}
	case KindCheckpoint:
		var c Checkpoint
		if err := dec(&c); err != nil {
			return err
		}
		v.Checkpoint = &c
	case KindRoundEnd:
		var e roundEnd
		if err := dec(&e); err != nil {
			return err
		}
		v.Open = 0
		v.State, v.Reason, v.Detail = e.State, e.Reason, e.Detail
		v.Tokens += e.Tokens
		v.CostUSD += e.CostUSD
		v.ElapsedMs += e.ElapsedMs
		v.Ends = append(v.Ends, e)
		v.LastEnd = &v.Ends[len(v.Ends)-1]
		v.Pending, v.Decisions, v.WaitingFrom, v.LastRoundAt, v.Held = e.Gates, nil, r.TS, r.TS, nil
	case KindGateDecided:
		var d gateDecision
		if err := dec(&d); err != nil {
			return err
		}
		v.Decisions = append(v.Decisions, d)
		delete(v.Approving, d.ID)
		for i, g := range v.Pending {
			if g.ID == d.ID {
				v.Pending = append(v.Pending[:i:i], v.Pending[i+1:]...)
				break
			}
		}
	case KindBudget:
		var b budgetRaise
		if err := dec(&b); err != nil {
			return err
		}
		v.Budget = b.New
	default:
		if ok, err := v.visitResume(r, dec); ok {
			return err
		}
		if !ledger.Skippable(r.Kind) {
			return fmt.Errorf("%w: loop ledger record %d has the unknown kind %q", ledger.ErrCorrupt, r.Seq, r.Kind)
		}
	}
	return nil
}

// appendState records a transition outside a round.
func appendState(l *ledger.Ledger, state, reason, detail string) error {
	_, err := l.Append(ledger.Entry{Kind: KindState, Body: stateChange{State: state, Reason: reason, Detail: detail}})
	return err
}

// openLoop opens loop id for writing.
func openLoop(home, id string) (*ledger.Ledger, error) {
	l, _, err := ledger.Open(loopDir(home, id), ledger.Options{})
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoLoop, id)
	}
	if err != nil {
		return nil, fmt.Errorf("loop %s: %w", id, err)
	}
	return l, nil
}
