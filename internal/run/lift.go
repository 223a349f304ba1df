package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/ledger"
)

// KindBlockerLifted records that a recorded drift blocker no longer holds: reconciliation
// found its locked input equal to the lock again. The body names the blocker and the evidence.
const KindBlockerLifted = "blocker.lifted"

// The locked inputs a drift blocker can name besides guidance:PATH, skill:NAME and models.ROLE.
const (
	InputLock        = "lock"
	InputRequirement = "requirement"
	InputHarness     = "harness"
	InputWorkflow    = "workflow"
	InputProfile     = "profile"
)

type liftedBody struct {
	Blocker  Blocker `json:"blocker"`
	Evidence string  `json:"evidence"`
}

// driftCodes are the blockers whose condition reconciliation re-checks: they lift when the
// locked input matches the lock again. Every other blocker stays until its own recovery.
var driftCodes = []string{BlockHarnessDrift, BlockProfileDrift, BlockSkillDrift, BlockRequirementDrift,
	BlockModelPolicyDrift, BlockWorkflowDrift, BlockGuidanceDrift, BlockLockTampered}

func sameBlocker(a, b Blocker) bool {
	return a.Code == b.Code && a.Stage == b.Stage && a.Input == b.Input && a.Ticket == b.Ticket && a.Detail == b.Detail
}

// reevaluate reconciles the locked inputs against the recorded blockers, in memory: holding
// is every blocker that stops the run now (recorded ones that still hold, then new ones),
// fresh the new ones, lifted the recorded drift blockers the current evidence clears. A run
// that never passed Preflight lifts nothing (its recovery is a new run), nor does a run whose
// execution lock cannot be read (nothing can be compared).
func (r *Run) reevaluate(env Env) (holding, fresh []Blocker, lifted []liftedBody) {
	current := r.Reconcile(env)
	locked := r.Lock != nil && !slices.ContainsFunc(current, func(b Blocker) bool { return b.Code == BlockLockTampered })
	for _, b := range r.Blockers {
		if locked && r.Stage != StagePreflight && slices.Contains(driftCodes, b.Code) && !holds(b, current) {
			lifted = append(lifted, liftedBody{Blocker: b, Evidence: r.liftEvidence(env, b)})
			continue
		}
		holding = append(holding, b)
	}
	for _, b := range current {
		if !slices.ContainsFunc(r.Blockers, func(o Blocker) bool { return o.Code == b.Code && o.Detail == b.Detail }) {
			fresh = append(fresh, b)
		}
	}
	return append(holding, fresh...), fresh, lifted
}

// holds reports whether recorded blocker b is still found by reconciliation: a blocker about
// the same input (one recorded without an input: any of the same code).
func holds(b Blocker, current []Blocker) bool {
	return slices.ContainsFunc(current, func(c Blocker) bool {
		return c.Code == b.Code && (b.Input == "" || c.Input == b.Input)
	})
}

// liftEvidence says what reconciliation found for b's input: equal to the lock.
func (r *Run) liftEvidence(env Env, b Blocker) string {
	return r.lockEvidence(env, b) + r.relockEvidence(b.Input)
}

func (r *Run) lockEvidence(env Env, b Blocker) string {
	lock := r.Lock
	switch in := b.Input; {
	case strings.HasPrefix(in, "guidance:"):
		for _, g := range lock.Guidance {
			if "guidance:"+g.Path == in {
				return fmt.Sprintf("guidance file %s has digest %s, equal to the locked one", g.Path, g.Digest)
			}
		}
	case strings.HasPrefix(in, "skill:"):
		for _, s := range lock.Skills {
			if "skill:"+s.Name == in {
				return fmt.Sprintf("pinned skill %s at %s has tree digest %s, equal to the locked one", s.Name, s.Path, s.TreeDigest)
			}
		}
	case strings.HasPrefix(in, "models."):
		return fmt.Sprintf("%s in %s equals the locked model policy", in, ProfilePath)
	case in == InputProfile:
		return fmt.Sprintf("%s has digest %s, equal to the locked one", ProfilePath, lock.ProfileDigest)
	case in == InputHarness:
		return fmt.Sprintf("this rein is version %s binary %s, the locked harness", env.Harness.Version, env.Harness.BinaryDigest)
	case in == InputWorkflow:
		return fmt.Sprintf("this harness runs workflow digest %s, the locked one", lock.Workflow.Digest)
	case in == InputRequirement && r.Snapshot != nil:
		return fmt.Sprintf("requirement source %s has digest %s, equal to the snapshot's; the requirement artifacts match the ledger", r.Snapshot.Path, r.Snapshot.ContentDigest)
	case in == InputLock:
		return "the execution lock matches the file digest the run ledger recorded"
	}
	return "reconciliation finds no " + b.Code + " any more"
}

// reconcileAndRecord re-evaluates the blockers against the current evidence and records the
// outcome: a blocker.lifted record for each drift blocker that no longer holds, a run.blocked
// record with the new ones. Any blocker that holds stops the run (*BlockedError).
func (r *Run) reconcileAndRecord(env Env, l *ledger.Ledger) error {
	holding, fresh, lifted := r.reevaluate(env)
	for _, lb := range lifted {
		if _, err := l.Append(ledger.Entry{Kind: KindBlockerLifted, Body: lb}); err != nil {
			return err
		}
		r.Blockers = slices.DeleteFunc(r.Blockers, func(o Blocker) bool { return sameBlocker(o, lb.Blocker) })
	}
	if len(fresh) > 0 {
		if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: fresh}}); err != nil {
			return err
		}
		r.Blockers = append(r.Blockers, fresh...)
	}
	if len(holding) > 0 {
		return &BlockedError{RunID: r.ID, Blockers: holding}
	}
	return nil
}
