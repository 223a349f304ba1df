package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// KindRelocked records a relock: a person adopted the changed contract file as the loop's
// contract. Its body is an [Amendment]; the ledger's header keeps the digest locked at start.
const KindRelocked = "contract.relocked"

// ReasonRelocked is the reason recorded when a relock lifts contract drift.
const ReasonRelocked = "contract_relocked"

var (
	// ErrNotDrifted: a relock of a loop whose contract file matches the locked contract.
	ErrNotDrifted = errors.New("the contract has not drifted")
	// ErrNotRelockable: the changed contract cannot be adopted into this loop; the error
	// names the recovery.
	ErrNotRelockable = errors.New("contract cannot be relocked")
)

// Amendment is the body of a contract.relocked record: the contract adopted, from which
// digest to which, who decided and when, and what changed. Budget and Gates are set when a
// relock changes them, so that a widened budget or a narrowed human gate is never silent.
type Amendment struct {
	N         int             `json:"n"`
	File      string          `json:"file"`
	OldDigest artifact.Digest `json:"oldDigest"`
	NewDigest artifact.Digest `json:"newDigest"`
	Approver  string          `json:"approver"`
	At        time.Time       `json:"at"`
	Changed   []string        `json:"changed"` // the normalized contract's fields that differ
	Budget    *BudgetChange   `json:"budget,omitempty"`
	Gates     *GateChange     `json:"gates,omitempty"`
	Contract  Normalized      `json:"contract"` // the contract in force from now on
}

// BudgetChange is a relock's change of stop.budget.
type BudgetChange struct {
	Old Budget `json:"old"`
	New Budget `json:"new"`
}

// GateChange is a relock's change of human_gate: the action classes added and removed, and
// the timeout.
type GateChange struct {
	Added      []string `json:"added,omitempty"`
	Removed    []string `json:"removed,omitempty"`
	OldTimeout string   `json:"oldTimeout"`
	NewTimeout string   `json:"newTimeout"`
}

// Relock adopts loop id's changed contract file as its contract, a decision recorded with
// its approver in an immutable contract.relocked record. The changed contract must validate
// and keep the loop's trigger (a new trigger is a new loop). A loop that drift blocked goes
// back to the state it had before the drift. Nothing is written when the relock is refused.
func Relock(env Env, id, approver string) (Amendment, error) {
	var a Amendment
	if strings.TrimSpace(approver) == "" {
		return a, fmt.Errorf("%w: a relock is a person's decision: it needs an approver", ErrInvalidContract)
	}
	err := withLease(env, id, "relock", func(l *ledger.Ledger) error {
		v, err := readView(env.Home, id)
		if err != nil {
			return err
		}
		if a, err = relockPlan(env, v, approver); err != nil {
			return err
		}
		es := []ledger.Entry{{Kind: KindRelocked, Body: a}}
		if v.Reason == ReasonContractDrift {
			es = append(es, ledger.Entry{Kind: KindState, Body: v.afterDrift(ReasonRelocked, "relocked by "+approver)})
		}
		_, err = l.AppendAll(es, nil)
		return err
	})
	return a, err
}

// relockPlan decides a relock on v as it stands: the amendment, or why it is refused.
func relockPlan(env Env, v *view, approver string) (Amendment, error) {
	if v.State == StateCompleted || v.State == StateAborted {
		return Amendment{}, fmt.Errorf("%w: loop %s is %s", ErrFinished, v.ID, v.State)
	}
	c, err := LoadContract(v.Started.File)
	if err != nil {
		return Amendment{}, fmt.Errorf("%w: the contract file %s does not validate, so it cannot be adopted: fix or restore it: %w", ErrNotRelockable, v.Started.File, err)
	}
	if c.Digest == v.Started.ContractDigest {
		return Amendment{}, fmt.Errorf("%w: %s matches loop %s's locked contract %s; nothing to relock", ErrNotDrifted, v.Started.File, v.ID, c.Digest)
	}
	old, next := v.Started.Contract, c.Normalized
	if !triggerEqual(old.Trigger, next.Trigger) {
		return Amendment{}, fmt.Errorf("%w: the changed contract has another trigger (%s, locked %s): restore the trigger, or start a new loop on the new contract (rein loop start %s)", ErrNotRelockable, next.Trigger.Kind, old.Trigger.Kind, v.Started.File)
	}
	if slices.ContainsFunc(next.Verification, func(x Verification) bool { return x.DeliveryRun != "" }) != slices.ContainsFunc(old.Verification, func(x Verification) bool { return x.DeliveryRun != "" }) {
		return Amendment{}, fmt.Errorf("%w: a relock cannot add or remove a delivery run as the goal: restore the verification, or start a new loop", ErrNotRelockable)
	}
	a := Amendment{N: v.Relocks + 1, File: v.Started.File, OldDigest: v.Started.ContractDigest, NewDigest: c.Digest,
		Approver: approver, At: env.now().Truncate(time.Second), Changed: changedFields(old, next), Contract: next}
	if old.Budget != next.Budget {
		a.Budget = &BudgetChange{Old: old.Budget, New: next.Budget}
	}
	added, removed := setDiff(old.RequiredFor, next.RequiredFor)
	if len(added)+len(removed) > 0 || old.GateTimeout != next.GateTimeout {
		a.Gates = &GateChange{Added: added, Removed: removed, OldTimeout: old.GateTimeout, NewTimeout: next.GateTimeout}
	}
	return a, nil
}

func triggerEqual(a, b Trigger) bool {
	return a.Kind == b.Kind && a.Every == b.Every && slices.Equal(a.Paths, b.Paths)
}

// changedFields names the top-level fields of the normalized contract that differ, sorted.
func changedFields(old, next Normalized) []string {
	fields := func(n Normalized) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		data, _ := json.Marshal(n)
		_ = json.Unmarshal(data, &m)
		return m
	}
	a, b := fields(old), fields(next)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if string(a[k]) != string(b[k]) {
			out = append(out, k)
		}
	}
	return out
}

// setDiff returns what next adds to old and what it removes.
func setDiff(old, next []string) (added, removed []string) {
	for _, s := range next {
		if !slices.Contains(old, s) {
			added = append(added, s)
		}
	}
	for _, s := range old {
		if !slices.Contains(next, s) {
			removed = append(removed, s)
		}
	}
	return added, removed
}

// applyRelock folds a contract.relocked record into v: the amended contract is the one in
// force; a changed budget replaces the budget (raises included), an unchanged one keeps it.
func (v *view) applyRelock(a Amendment) {
	if a.Budget != nil {
		v.Budget = a.Contract.Budget
	}
	trig := v.Started.Trigger // a --trigger given at start stays
	v.Started.Contract, v.Started.ContractDigest, v.Started.Trigger = a.Contract, a.NewDigest, trig
	v.Relocks = a.N
	v.Amendments = append(v.Amendments, a)
}

// afterDrift is the state a loop returns to when its drift is lifted (the file restored, or
// relocked): waiting for a person or blocked by a stop rule as before the drift; otherwise
// ready (a budget or an identical retry is looked at again before the next round).
func (v *view) afterDrift(reason, detail string) stateChange {
	s := stateChange{State: StateReady, Reason: reason, Detail: detail}
	p := v.PreDrift
	switch {
	case p.State == StateWaitingForHuman:
		s.State = p.State
	case p.State == StateBlocked && p.Reason != ReasonBudgetExhausted && p.Reason != ReasonIdenticalRetry:
		s.State = p.State
	}
	if p.State != "" && s.State != StateReady {
		s.Detail += fmt.Sprintf("; the loop is %s again (%s: %s)", p.State, p.Reason, p.Detail)
	}
	return s
}

// WriteAmendment writes a relock for a person: digests, approver, what changed, and every
// budget and human-gate change spelled out.
func WriteAmendment(w io.Writer, a Amendment) {
	fmt.Fprintf(w, "relock %d: %s -> %s by %s at %s\n", a.N, a.OldDigest, a.NewDigest, a.Approver, a.At.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "  changed: %s\n", strings.Join(a.Changed, ", "))
	if b := a.Budget; b != nil {
		fmt.Fprintf(w, "  budget changed: rounds %d -> %d, tokens %d -> %d, cost_usd %.4f -> %.4f, elapsed %s -> %s\n",
			b.Old.Rounds, b.New.Rounds, b.Old.Tokens, b.New.Tokens, b.Old.CostUSD, b.New.CostUSD, orNone(b.Old.Elapsed), orNone(b.New.Elapsed))
	}
	if g := a.Gates; g != nil {
		fmt.Fprintf(w, "  human gate changed: added [%s], removed [%s], timeout %s -> %s\n", strings.Join(g.Added, ", "), strings.Join(g.Removed, ", "), g.OldTimeout, g.NewTimeout)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
