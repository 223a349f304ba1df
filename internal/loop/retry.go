package loop

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// RoundKey is what a round is before it runs (recorded in round.started): its inputs, its
// planned action and its expectation. A round whose key equals a failed earlier round's is an
// identical retry and is refused before it runs.
type RoundKey struct {
	// Inputs is the sha256 of the contract digest, Checkpoint and Evidence.
	Inputs string `json:"inputs"`
	// Checkpoint digests the latest checkpoint as the round's request carries it, less what
	// only numbers it (its round, the rounds a root cause failed in, output tails): "none"
	// before the first round; a stale checkpoint is the workspace's new tree digest.
	Checkpoint string `json:"checkpoint"`
	// Evidence digests the round's evidence: the last round's failing checks (id and root
	// cause), whether its claim was contradicted, and the gate decisions since.
	Evidence string `json:"evidence"`
	// Action is the planned action: the next step the last round reported (rein_loop_report's
	// nextStep, in the checkpoint), spaces collapsed; "" when none was reported or kept.
	Action string `json:"action"`
	// Expectation digests what the round is expected to close: the checkpoint's open items
	// (rein_loop_report's openItems) and the root causes that must stop failing.
	Expectation string `json:"expectation"`
}

// checkpointState is the part of a checkpoint that is a round's input.
type checkpointState struct {
	ContractDigest artifact.Digest   `json:"contractDigest"`
	CompletedScope string            `json:"completedScope"`
	Decisions      []string          `json:"decisions"`
	Artifacts      map[string]string `json:"artifacts"`
	Checks         []string          `json:"checks"`
	RootCauses     []string          `json:"rootCauses"`
	OpenItems      []string          `json:"openItems"`
	NextStep       string            `json:"nextStep"`
}

// roundKey computes the key of the round v's next round would be; stale is the workspace's
// tree digest when it changed since the checkpoint, else "".
func roundKey(v *view, stale string) RoundKey {
	var k RoundKey
	cp := v.Checkpoint
	var failing []string
	switch {
	case cp == nil:
		k.Checkpoint = string(artifact.Sum([]byte("none")))
	case stale != "":
		k.Checkpoint = string(artifact.Sum([]byte("stale\x00" + stale)))
	default:
		s := checkpointState{ContractDigest: cp.ContractDigest, CompletedScope: cp.CompletedScope, Decisions: cp.Decisions,
			Artifacts: cp.Artifacts, OpenItems: cp.OpenItems, NextStep: cp.NextStep}
		for _, r := range cp.Verification {
			s.Checks = append(s.Checks, fmt.Sprintf("%s %t %s", r.ID, r.Passed, r.Fingerprint))
		}
		for _, c := range cp.RootCauses {
			s.RootCauses = append(s.RootCauses, c.Check+" "+c.Fingerprint)
		}
		k.Checkpoint = digestJSON(s)
		k.Action = strings.Join(strings.Fields(cp.NextStep), " ")
	}
	var ev []string
	if e := v.LastEnd; e != nil && stale == "" {
		for _, r := range e.Verification {
			if !r.Passed {
				failing = append(failing, r.ID+" "+r.Fingerprint)
			}
		}
		ev = append(ev, failing...)
		ev = append(ev, fmt.Sprintf("contradicted %t", e.Reason == ReasonClaimContradicted))
	}
	for _, d := range v.Decisions {
		ev = append(ev, fmt.Sprintf("gate %s %s %d %s", d.ID, d.Decision, d.ExitCode, d.Reason))
	}
	k.Evidence = digestJSON(ev)
	var open []string
	if cp != nil && stale == "" {
		open = cp.OpenItems
	}
	slices.Sort(failing)
	k.Expectation = digestJSON(map[string][]string{"openItems": open, "clear": failing})
	k.Inputs = string(artifact.Sum([]byte(string(v.Started.ContractDigest) + "\n" + k.Checkpoint + "\n" + k.Evidence)))
	return k
}

func digestJSON(x any) string {
	data, _ := json.Marshal(x)
	return string(artifact.Sum(data))
}

// retried returns the failed earlier round key repeats, or 0. A round failed when any of
// its checks failed (an interrupted round never ran to its verification and does not count).
func retried(v *view, k RoundKey) int {
	for _, e := range v.Ends {
		if e.Reason == ReasonInterrupted || allPassed(e.Verification) {
			continue
		}
		if prev, ok := v.Keys[e.Round]; ok && prev == k {
			return e.Round
		}
	}
	return 0
}

// refuseRetry records the refusal of an identical retry (once: a loop already blocked by
// one stays so without a new record) and reports whether the round is refused. A loop
// blocked by one whose next round is no longer identical is recorded ready, retry_lifted.
func refuseRetry(l *ledger.Ledger, v *view, k RoundKey, n int) (bool, error) {
	prev := retried(v, k)
	switch {
	case prev > 0 && v.Reason == ReasonIdenticalRetry:
		return true, nil
	case prev > 0:
		return true, appendState(l, StateBlocked, ReasonIdenticalRetry, fmt.Sprintf(
			"round %d would retry round %d, which failed, identically: the same inputs (%s), planned action %q and expectation; it was not run. Change the workspace (or the approach) and run the loop again, or abort it",
			n, prev, k.Inputs, k.Action))
	case v.Reason == ReasonIdenticalRetry:
		return false, appendState(l, StateReady, ReasonRetryLifted, fmt.Sprintf("round %d's inputs differ from every failed round's", n))
	}
	return false, nil
}
