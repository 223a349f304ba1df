package loop

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/lease"
)

// StatusSchemaVersion versions [Report]'s JSON.
const StatusSchemaVersion = 1

// Report is a loop's status: read from its ledger without writing anything anywhere.
type Report struct {
	Schema         int                  `json:"schema"`
	ID             string               `json:"id"`
	State          string               `json:"state"`
	Reason         string               `json:"reason"`
	Detail         string               `json:"detail,omitempty"`
	Contract       string               `json:"contract"`
	ContractDigest artifact.Digest      `json:"contractDigest"`
	Drift          string               `json:"drift,omitempty"`
	Goal           string               `json:"goal"`
	Trigger        Trigger              `json:"trigger"`
	Rounds         int                  `json:"rounds"`
	Used           Budget               `json:"used"`
	Budget         Budget               `json:"budget"`
	Verification   []VerificationResult `json:"verification,omitempty"`
	RootCauses     []RootCause          `json:"rootCauses,omitempty"`
	Gates          []GateRequest        `json:"gates,omitempty"`
	History        []Step               `json:"history"`
	Firings        int                  `json:"firings"`
	LastFiring     *Firing              `json:"lastFiring,omitempty"`
	Lease          *lease.State         `json:"lease,omitempty"`
	Next           string               `json:"next,omitempty"`
	Relocks        []Amendment          `json:"relocks,omitempty"` // contract.relocked, in order
	Run            string               `json:"run,omitempty"`     // the delivery run the goal names
}

// Step is one ended round.
type Step struct {
	Round  int    `json:"round"`
	State  string `json:"state"`
	Reason string `json:"reason"`
	Claim  string `json:"claim"`
}

// Status reports loop id. A live lease shows it running; drift is computed, not recorded.
func Status(env Env, id string) (*Report, error) {
	v, err := readView(env.Home, id)
	if err != nil {
		return nil, err
	}
	r := &Report{Schema: StatusSchemaVersion, ID: id, State: v.State, Reason: v.Reason, Detail: v.Detail,
		Contract: v.Started.File, ContractDigest: v.Started.ContractDigest, Goal: v.Started.Contract.Goal,
		Trigger: v.Started.Trigger, Rounds: v.Rounds, Budget: v.Budget, Gates: v.Pending,
		Used: Budget{Rounds: v.Rounds, Tokens: v.Tokens, CostUSD: v.CostUSD}, Firings: v.Firings, LastFiring: v.LastFiring, Relocks: v.Amendments, Run: v.Started.Run}
	if v.ElapsedMs > 0 {
		r.Used.Elapsed = fmt.Sprintf("%dms", v.ElapsedMs)
	}
	if v.LastEnd != nil {
		r.Verification = v.LastEnd.Verification
	}
	if v.Checkpoint != nil {
		r.RootCauses = v.Checkpoint.RootCauses
	}
	for _, e := range v.Ends {
		r.History = append(r.History, Step{Round: e.Round, State: e.State, Reason: e.Reason, Claim: e.Claim})
	}
	if l, err := lease.Read(filepath.Join(loopDir(env.Home, id), "lease.json")); err == nil && l != nil && l.Live {
		r.Lease = l
		if l.Command != "serve" || v.Open > 0 { // a served loop between rounds waits for its trigger
			r.State = StateRunning
		}
	}
	if r.State != StateCompleted && r.State != StateAborted {
		r.Drift = contractDrift(v)
	}
	r.Next = next(r)
	return r, nil
}

func next(r *Report) string {
	switch {
	case r.Drift != "":
		return "restore the contract file to the locked one, or adopt it with `rein loop relock " + r.ID + " --approver WHO`; then `rein loop run " + r.ID + "`"
	case r.State == StateReady && r.Lease != nil:
		return fmt.Sprintf("served by rein loop serve (pid %d): a round runs when its trigger fires", r.Lease.PID)
	case r.State == StateReady:
		return "rein loop run " + r.ID
	case r.State == StateWaitingForHuman && r.Reason == ReasonRunWaiting:
		return "decide what the delivery run waits for (rein run status " + r.Run + "), then rein loop run " + r.ID
	case r.State == StateWaitingForHuman:
		var s []string
		for _, g := range r.Gates {
			s = append(s, fmt.Sprintf("rein loop approve %s --gate %s | rein loop reject %s --gate %s --reason TEXT", r.ID, g.ID, r.ID, g.ID))
		}
		return strings.Join(s, "; ")
	case r.State == StateBlocked && r.Reason == ReasonIdenticalRetry:
		return "change the workspace (or the approach), then rein loop run " + r.ID + "; or rein loop abort " + r.ID
	case r.State == StateBlocked && r.Reason == ReasonBudgetExhausted:
		return "rein loop raise " + r.ID + " --budget rounds=N --approver NAME"
	case r.State == StateBlocked:
		return "look at the evidence above; rein loop abort " + r.ID
	}
	return ""
}

// WriteText writes r for a person.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "loop: %s\nstate: %s (%s)\n", r.ID, r.State, r.Reason)
	if r.Detail != "" {
		fmt.Fprintf(w, "  %s\n", r.Detail)
	}
	fmt.Fprintf(w, "goal: %s\ncontract: %s (%s)\n", r.Goal, r.Contract, r.ContractDigest)
	for _, a := range r.Relocks {
		WriteAmendment(w, a)
	}
	if r.Drift != "" {
		fmt.Fprintf(w, "drift: %s\n", r.Drift)
	}
	fmt.Fprintf(w, "rounds: %d of %d; tokens %d; cost $%.4f\n", r.Rounds, r.Budget.Rounds, r.Used.Tokens, r.Used.CostUSD)
	if f := r.LastFiring; f != nil {
		d := f.Disposition
		if f.Reason != "" {
			d += ": " + f.Reason
		}
		fmt.Fprintf(w, "trigger: %s; %d firing(s), the last %s %s from %s (%s)\n", r.Trigger, r.Firings, f.Kind, f.At.Format(time.RFC3339), f.Source, d)
	}
	for _, s := range r.History {
		fmt.Fprintf(w, "  round %d: %s (%s), model claimed %s\n", s.Round, s.State, s.Reason, s.Claim)
	}
	for _, v := range r.Verification {
		if v.Passed {
			fmt.Fprintf(w, "verification %s: passed\n", v.ID)
		} else {
			fmt.Fprintf(w, "verification %s: failed (exit %d, root cause %s: %s)\n", v.ID, v.ExitCode, v.Fingerprint, strings.Join(v.Signature, "; "))
		}
	}
	for _, g := range r.Gates {
		fmt.Fprintf(w, "human gate %s: %s %q (round %d, %s)\n", g.ID, g.Class, g.Part, g.Round, g.Tool)
	}
	if r.Next != "" {
		fmt.Fprintf(w, "next: %s\n", r.Next)
	}
}

// Latest is the id of the newest loop under home.
func Latest(home string) (string, error) {
	ents, err := os.ReadDir(filepath.Join(home, LoopsDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "loop-") {
			ids = append(ids, e.Name())
		}
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("%w: none was started (rein loop start FILE)", ErrNoLoop)
	}
	slices.Sort(ids)
	return ids[len(ids)-1], nil
}
