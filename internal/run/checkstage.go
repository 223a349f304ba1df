package run

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// Stage ids and the gate of the stages after the tickets (the ticket stages are the ticket
// loop's).
const (
	StageManualIntegration = "manual-integration"
	StageReconciliation    = "reconciliation"
	StageFinalChecklist    = "final-checklist"
	StageFullVerification  = "full-run-verification"
	StageRunAcceptance     = "run-acceptance"
	GateRun                = "run"
)

// Ledger record kinds of the stages after the tickets.
const (
	// KindCheckResult settles one attempt of a deterministic stage after the tickets (Manual
	// Integration's refusals, Reconciliation, Final Checklist, Full Run Verification): its
	// outcome, the blockers it found and the artifact it wrote. Body: [CheckResult].
	KindCheckResult = "stage.check"
	// KindIntegrated records a completed integration (body: [Integration]);
	// KindIntegrationConflict a conflict that stopped it ([IntegrationConflict]).
	KindIntegrated          = "integration.recorded"
	KindIntegrationConflict = "integration.conflict"
	// KindDeliverySummary records the delivery summary the Run Acceptance gate decides on;
	// KindDeliveryReady the delivered branch and head ([DeliveryReady]).
	KindDeliverySummary = "delivery.summary"
	KindDeliveryReady   = "delivery.ready"
)

// Check outcomes.
const (
	CheckPassed = "passed"
	CheckFailed = "failed"
)

// CheckResult is the body of a stage.check record.
type CheckResult struct {
	Stage    string              `json:"stage"`
	Attempt  int                 `json:"attempt"`
	Outcome  string              `json:"outcome"` // passed or failed
	Blockers []Blocker           `json:"blockers"`
	Artifact *artifact.Reference `json:"artifact,omitempty"`
}

// deliveryState is what the stages after the tickets recorded.
type deliveryState struct {
	Integration *Integration
	// Conflict is the latest integration conflict; nil once an integration is recorded.
	Conflict *IntegrationConflict
	// Checks is the latest check result per stage.
	Checks  map[string]CheckResult
	Summary *artifact.Reference
	Ready   *DeliveryReady
}

// applyDelivery applies the records of the stages after the tickets.
func (r *Run) applyDelivery(kind string, body []byte) error {
	d := &r.Delivery
	switch kind {
	case KindCheckResult:
		var c CheckResult
		if err := decodeStrict(body, &c); err != nil {
			return err
		}
		if d.Checks == nil {
			d.Checks = map[string]CheckResult{}
		}
		d.Checks[c.Stage] = c
		if r.Unsettled[c.Stage] == c.Attempt {
			delete(r.Unsettled, c.Stage)
		}
	case KindIntegrated:
		var in Integration
		if err := decodeStrict(body, &in); err != nil {
			return err
		}
		d.Integration, d.Conflict = &in, nil
		delete(r.Unsettled, StageManualIntegration)
	case KindIntegrationConflict:
		var c IntegrationConflict
		if err := decodeStrict(body, &c); err != nil {
			return err
		}
		d.Conflict = &c
		delete(r.Unsettled, StageManualIntegration)
	case KindDeliverySummary:
		var s summaryBody
		if err := decodeStrict(body, &s); err != nil {
			return err
		}
		d.Summary = &s.Artifact
	case KindDeliveryReady:
		var dr DeliveryReady
		if err := decodeStrict(body, &dr); err != nil {
			return err
		}
		d.Ready = &dr
	default:
		return fmt.Errorf("not a delivery record")
	}
	return nil
}

type summaryBody struct {
	Artifact artifact.Reference `json:"artifact"`
}

// checkStage is one deterministic stage after the tickets: run makes attempt n and returns
// the artifact it wrote and the blockers it found; done runs once it passed, before the
// stage.completed record (it must be idempotent: a crash may repeat it).
type checkStage struct {
	stage string
	run   func(ctx context.Context, env Env, n int) (*artifact.Reference, []Blocker, error)
	done  func(ctx context.Context, env Env, l *ledger.Ledger) error
}

// runCheck runs a check stage: stage.started, the check, a stage.check record, and on
// success the stage's done step and stage.completed. A failed check is a *BlockedError; its
// blockers are reported by status until the next `rein run next` checks again. A check a
// crash interrupted before its stage.check record is run again (it is deterministic); one
// that passed without its stage.completed gets it.
func (r *Run) runCheck(ctx context.Context, env Env, l *ledger.Ledger, cs checkStage) error {
	if c, ok := r.Delivery.Checks[cs.stage]; ok && c.Outcome == CheckPassed && c.Attempt == r.Attempts[cs.stage] {
		return r.completeCheck(ctx, env, l, cs, c.Attempt)
	}
	n := r.Attempts[cs.stage] + 1
	if _, err := l.Append(ledger.Entry{Kind: KindStageStarted, Body: stageBody{Stage: cs.stage, Attempt: n}}); err != nil {
		return err
	}
	r.Attempts[cs.stage] = n
	env.crash("check")
	art, bs, err := cs.run(ctx, env, n)
	if err != nil {
		return err
	}
	res := CheckResult{Stage: cs.stage, Attempt: n, Outcome: CheckPassed, Blockers: bs, Artifact: art}
	if len(bs) > 0 {
		res.Outcome = CheckFailed
	} else {
		res.Blockers = []Blocker{}
	}
	if _, err := l.Append(ledger.Entry{Kind: KindCheckResult, Body: res}); err != nil {
		return err
	}
	if r.Delivery.Checks == nil {
		r.Delivery.Checks = map[string]CheckResult{}
	}
	r.Delivery.Checks[cs.stage] = res
	if len(bs) > 0 {
		return &BlockedError{RunID: r.ID, Blockers: bs}
	}
	return r.completeCheck(ctx, env, l, cs, n)
}

func (r *Run) completeCheck(ctx context.Context, env Env, l *ledger.Ledger, cs checkStage, n int) error {
	if cs.done != nil {
		if err := cs.done(ctx, env, l); err != nil {
			return err
		}
	}
	_, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: cs.stage, Attempt: n, Outcome: CheckPassed}})
	return err
}

// checkBlockers are the blockers of the current stage's latest failed check: reported by
// status, never lifted by a record — the next check decides again.
func (r *Run) checkBlockers() []Blocker {
	if c, ok := r.Delivery.Checks[r.Stage]; ok && c.Outcome == CheckFailed && c.Attempt == r.Attempts[r.Stage] {
		return c.Blockers
	}
	return nil
}

// recheck is the recovery every check blocker ends with.
func (r *Run) recheck() string {
	return "then run `rein run next " + r.ID + "`, which checks again"
}
