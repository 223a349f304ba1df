package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// settleDecisions settles what a crash left half-recorded outside the model stages: Preflight
// started without its completion, a rejection artifact without its gate.decision record. It
// returns nil when nothing was interrupted.
func (r *Run) settleDecisions(env Env, l *ledger.Ledger) (*Settlement, error) {
	if r.Stage == StagePreflight {
		return r.settlePreflight(env, l)
	}
	if r.Stage == StageClarification {
		return r.settleClarification(l)
	}
	for _, gate := range []string{GateSpec, GateTicketPlan} {
		if s, err := r.settleRejection(env, l, gate); s != nil || err != nil {
			return s, err
		}
	}
	return nil, nil
}

// settlePreflight re-runs the deterministic Preflight: a missing artifact is written, one that
// matches the recomputed result is recorded, one that differs blocks with unknown_outcome.
func (r *Run) settlePreflight(env Env, l *ledger.Ledger) (*Settlement, error) {
	if r.Lock == nil || r.Snapshot == nil {
		return nil, fmt.Errorf("run %s: Preflight cannot be settled without its lock and snapshot", r.ID)
	}
	s := &Settlement{Stage: StagePreflight, Attempt: 1}
	if _, ok := r.Unsettled[StagePreflight]; !ok {
		if _, err := l.Append(ledger.Entry{Kind: KindStageStarted, Body: stageBody{Stage: StagePreflight, Attempt: 1}}); err != nil {
			return s, err
		}
	}
	pf := Preflight(r.Project, *r.Lock, *r.Snapshot)
	rel := RunsDir + "/" + r.ID + "/" + ArtPreflight + ".md"
	path := filepath.Join(r.Project, filepath.FromSlash(rel))
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		data = renderArtifact(r.ID, ArtPreflight, "Preflight", env.now(), pf)
		if err := writeImmutable(path, data); err != nil {
			return s, err
		}
		s.Detail = "Preflight was interrupted before its artifact; it was run again"
	case err != nil:
		return s, err
	default:
		var got PreflightResult
		if err := decodeArtifact(data, &got); err != nil || !reflect.DeepEqual(normalPreflight(got), normalPreflight(pf)) {
			s.Outcome = BlockUnknownOutcome
			s.Detail = rel + " exists but does not match Preflight run again"
			b := Blocker{Code: BlockUnknownOutcome, Stage: StagePreflight,
				Detail:   "Preflight was interrupted and " + s.Detail,
				Recovery: []string{"inspect " + rel, "abort the run (rein run abort " + r.ID + ") and start a new one"}}
			if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
				return s, err
			}
			r.Blockers = append(r.Blockers, b)
			return s, &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
		}
		s.Detail = "Preflight was interrupted after its artifact, which matches Preflight run again; its records were added"
	}
	ref, err := artifact.NewReference(ArtPreflight, rel, data)
	if err != nil {
		return s, err
	}
	if r.Preflight == nil {
		if _, err := l.Append(ledger.Entry{Kind: KindPreflight, Body: preflightBody{PreflightResult: pf, Artifact: ref}}); err != nil {
			return s, err
		}
		r.Preflight, r.Gaps = &ref, pf.Gaps
	}
	if len(pf.Blockers) > 0 {
		s.Outcome = "blocked"
		if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: pf.Blockers}}); err != nil {
			return s, err
		}
		r.Blockers = append(r.Blockers, pf.Blockers...)
		return s, &BlockedError{RunID: r.ID, Blockers: pf.Blockers}
	}
	s.Outcome = "passed"
	if _, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StagePreflight, Attempt: 1, Outcome: "passed"}}); err != nil {
		return s, err
	}
	r.Stage = DeliveryWorkflow().Next(StagePreflight)
	delete(r.Unsettled, StagePreflight)
	return s, nil
}

// normalPreflight makes nil and empty slices compare equal.
func normalPreflight(p PreflightResult) PreflightResult {
	if len(p.Checks) == 0 {
		p.Checks = nil
	}
	if len(p.Gaps) == 0 {
		p.Gaps = nil
	}
	if len(p.Blockers) == 0 {
		p.Blockers = nil
	}
	return p
}

// rejectionBody is the content of a gate's rejection-reason artifact.
type rejectionBody struct {
	Gate   string          `json:"gate"`
	Digest artifact.Digest `json:"digest"`
	Reason string          `json:"reason"`
	By     string          `json:"by,omitempty"`
}

// settleClarification records answers a crash left unrecorded: clarification.md written
// (it holds every answer) without its clarification.answered record, or the record without the
// stage's completion. Answers bound to another research artifact block with unknown_outcome.
func (r *Run) settleClarification(l *ledger.Ledger) (*Settlement, error) {
	s := &Settlement{Stage: StageClarification, Attempt: 1, Outcome: BlockUnknownOutcome}
	if r.Clarification == nil {
		rel := RunsDir + "/" + r.ID + "/" + r.clarificationFile()
		data, err := os.ReadFile(filepath.Join(r.Project, filepath.FromSlash(rel)))
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		resRef, _ := r.accepted(StageResearch)
		var c Clarification
		if err := decodeArtifact(data, &c); err != nil || c.Research != resRef.Digest {
			s.Detail = rel + " does not answer the accepted research"
			b := Blocker{Code: BlockUnknownOutcome, Stage: StageClarification, Detail: "a clarification was interrupted and " + s.Detail,
				Recovery: []string{"inspect " + rel, "abort the run (rein run abort " + r.ID + ") and start a new one"}}
			if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
				return s, err
			}
			r.Blockers = append(r.Blockers, b)
			return s, &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
		}
		ref, err := artifact.NewReference(ArtClarification, rel, data)
		if err != nil {
			return s, err
		}
		if _, err := l.Append(ledger.Entry{Kind: KindClarified, Body: clarifiedBody{Artifact: ref}}); err != nil {
			return s, err
		}
		r.Clarification = &ref
	}
	if _, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StageClarification, Attempt: 1, Outcome: "answered"}}); err != nil {
		return s, err
	}
	r.Stage = StageSpecification
	s.Outcome, s.Detail = "answered", "the clarification answers were written without their ledger records; the records were added"
	return s, nil
}

// settleRejection records the gate.decision of a rejection artifact a crash left unrecorded.
func (r *Run) settleRejection(env Env, l *ledger.Ledger, gate string) (*Settlement, error) {
	g := gateFor(gate)
	n := len(r.Gates[gate]) + 1
	rel := fmt.Sprintf("%s/%s/%s-%d.md", RunsDir, r.ID, g.rejection, n)
	data, err := os.ReadFile(filepath.Join(r.Project, filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	s := &Settlement{Stage: g.stage, Attempt: n, Outcome: BlockUnknownOutcome}
	var body rejectionBody
	var art *artifact.Reference
	if err := decodeArtifact(data, &body); err == nil && body.Gate == gate {
		for _, a := range r.StageAttempts[g.model] {
			if a.Artifact != nil && a.Artifact.Digest == body.Digest {
				art = a.Artifact
			}
		}
	}
	if art == nil {
		s.Detail = rel + " is not a rejection of an accepted " + g.what
		b := Blocker{Code: BlockUnknownOutcome, Stage: g.stage, Detail: "a gate decision was interrupted and " + s.Detail,
			Recovery: []string{"inspect " + rel, "abort the run (rein run abort " + r.ID + ") and start a new one"}}
		if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
			return s, err
		}
		r.Blockers = append(r.Blockers, b)
		return s, &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
	}
	ref, err := artifact.NewReference(g.rejection, rel, data)
	if err != nil {
		return s, err
	}
	d := GateDecision{Gate: gate, Decision: GateRejected, Digest: body.Digest, Artifact: *art, Reason: &ref, By: body.By, At: env.now().Truncate(time.Second)}
	if _, err := l.Append(ledger.Entry{Kind: KindGateDecision, Body: d}); err != nil {
		return s, err
	}
	r.Gates[gate] = append(r.Gates[gate], d)
	s.Outcome, s.Detail = GateRejected, "the rejection artifact was written without its gate.decision record; the record was added"
	return s, nil
}

// settleApproval completes a gate approval that a crash left recorded without its
// stage.completed record (ApproveGate's crash point "approval"): the gate stage completes
// with that approval — and the run gate's with Delivery Ready — and nobody is asked again, so
// an approval reported as recorded is never lost and never recorded twice. An approval whose
// record never reached the ledger is absent: the gate still waits for it.
func (r *Run) settleApproval(env Env, l *ledger.Ledger) (*Settlement, error) {
	for _, gate := range []string{GateSpec, GateTicketPlan, GateRun} {
		g := gateFor(gate)
		n, ok := r.Uncompleted[g.stage]
		if !ok || r.Stage != g.stage {
			continue
		}
		d := r.Gates[gate][n-1]
		s := &Settlement{Stage: g.stage, Attempt: n, Outcome: GateApproved,
			Detail: fmt.Sprintf("the approval of %s by %s was recorded without its stage.completed record; the record was added", d.Digest, d.By)}
		return s, r.completeApproval(env, l, gate, n, d.Artifact)
	}
	return nil, nil
}
