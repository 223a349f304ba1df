package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/session"
)

// BlockUnknownOutcome: a stage attempt was interrupted and its evidence (session ledger,
// artifact) proves neither that its contract was accepted nor that it was not.
const BlockUnknownOutcome = "unknown_outcome"

// ReasonInterrupted is the reason of an attempt that a crash interrupted and that resume
// settled by evidence.
const ReasonInterrupted = "interrupted"

// Settlement says how [Resume] settled an interrupted attempt.
type Settlement struct {
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt"`
	// Outcome: accepted (the contract was accepted: the attempt completes with its artifact),
	// approved (a gate's approval was recorded: the gate stage completes with it), failed
	// (provably not accepted: a new attempt follows) or unknown_outcome (blocked).
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

// completed reports whether the settlement completed its stage (an accepted attempt, a
// recorded approval): that stage is the one that ran.
func (s *Settlement) completed() bool {
	return s != nil && (s.Outcome == "accepted" || s.Outcome == GateApproved)
}

// ResumeResult is what [Resume] did.
type ResumeResult struct {
	Settled []Settlement
	// Stage is the stage that ran or completed ("" when nothing ran).
	Stage string
}

// Resume rebuilds the run from its ledger and locked inputs (reconciling drift first, as
// status does), settles a stage attempt a crash interrupted by evidence, and continues: when the
// settlement completed the interrupted stage, that stage is the one resume ran; otherwise it
// runs the current stage as [Next] does. It holds the run's lease while it runs, as Next does.
func Resume(ctx context.Context, env Env, id string) (res ResumeResult, err error) {
	err = withLease(env, id, "resume", func() error {
		res, err = resume(ctx, env, id)
		return err
	})
	return res, err
}

// resume is [Resume] under the run's lease.
func resume(ctx context.Context, env Env, id string) (ResumeResult, error) {
	var res ResumeResult
	r, l, err := openRun(env.Home, id)
	if err != nil {
		return res, err
	}
	if err := r.ready(env, l); err != nil {
		l.Close()
		return res, err
	}
	if env, err = r.withSandbox(env, l, "resume"); err != nil {
		l.Close()
		return res, err
	}
	s, err := r.settleDecisions(env, l)
	if s != nil || err != nil {
		l.Close()
		if s != nil {
			res.Settled = append(res.Settled, *s)
			res.Stage = s.Stage
		}
		return res, err
	}
	s, err = r.settleInterrupted(env, l)
	if s == nil && err == nil && r.Stage == StageManualIntegration && r.Delivery.Conflict != nil {
		// A person resolved the conflict on the branch: integration continues from there.
		err = r.runIntegration(ctx, env, l, true)
		l.Close()
		return ResumeResult{Stage: StageManualIntegration}, err
	}
	l.Close()
	if s != nil {
		res.Settled = append(res.Settled, *s)
	}
	if err != nil {
		return res, err
	}
	if s.completed() {
		res.Stage = s.Stage
		return res, nil
	}
	res.Stage, err = next(ctx, env, id)
	return res, err
}

// ready refuses an aborted or blocked run, reconciles the locked inputs and checks the
// recorded evidence (artifacts, stage sessions). Staleness is left to Next: a rejection a
// crash left half-recorded, which resume settles, may be what resolves it.
func (r *Run) ready(env Env, l *ledger.Ledger) error {
	if r.Aborted {
		return fmt.Errorf("%w: run %s was aborted", ErrFinished, r.ID)
	}
	if err := r.reconcileAndRecord(env, l); err != nil {
		return err
	}
	return r.checkEvidence(env)
}

func (r *Run) modelStageFor(stage string) (modelStage, bool) {
	switch stage {
	case StageResearch:
		return r.researchStage(), true
	case StageSpecification:
		return r.specStage(), true
	case StageTicketPlanning:
		return r.planStage(), true
	}
	return modelStage{}, false
}

// settleInterrupted settles a gate approval recorded without its stage.completed
// (settleApproval), or the current model stage's interrupted attempt, if any: an accepted
// attempt without its stage.completed record is completed; a started attempt without its
// stage.attempt record is settled by evidence. It returns nil when nothing was interrupted.
func (r *Run) settleInterrupted(env Env, l *ledger.Ledger) (*Settlement, error) {
	if s, err := r.settleApproval(env, l); s != nil || err != nil {
		return s, err
	}
	ms, ok := r.modelStageFor(r.Stage)
	if !ok {
		return nil, nil
	}
	if n, ok := r.Uncompleted[ms.stage]; ok {
		a := r.StageAttempts[ms.stage][len(r.StageAttempts[ms.stage])-1]
		if err := r.completeStage(l, ms, a); err != nil {
			return nil, err
		}
		return &Settlement{Stage: ms.stage, Attempt: n, Outcome: "accepted", Detail: "the attempt was recorded accepted; its stage.completed record was added"}, nil
	}
	n, ok := r.Unsettled[ms.stage]
	if !ok {
		return nil, nil
	}
	a, detail, err := r.evidence(env, ms, n)
	if err != nil {
		return nil, err
	}
	s := &Settlement{Stage: ms.stage, Attempt: n, Outcome: BlockUnknownOutcome, Detail: detail}
	if a == nil {
		sdir := filepath.ToSlash(filepath.Join("runs", r.ID, "stages", fmt.Sprintf("%s-%d", ms.stage, n)))
		b := Blocker{Code: BlockUnknownOutcome, Stage: ms.stage,
			Detail: fmt.Sprintf("%s attempt %d was interrupted and its outcome cannot be proven: %s", ms.title, n, detail),
			Recovery: []string{
				"inspect the attempt's session ledger ($REIN_HOME/" + sdir + ", e.g. with `rein session verify`) and artifact " + RunsDir + "/" + r.ID + "/" + ms.file(n),
				"abort the run (rein run abort " + r.ID + ") and start a new one"}}
		if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
			return s, err
		}
		r.Blockers = append(r.Blockers, b)
		return s, &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
	}
	s.Outcome = a.Outcome
	if _, err := l.Append(ledger.Entry{Kind: KindStageAttempt, Body: *a}); err != nil {
		return s, err
	}
	r.StageAttempts[ms.stage] = append(r.StageAttempts[ms.stage], *a)
	delete(r.Unsettled, ms.stage)
	if a.Outcome == "accepted" {
		return s, r.completeStage(l, ms, *a)
	}
	return s, nil
}

// completeStage records the stage.completed of an accepted attempt and runs the stage's hook.
func (r *Run) completeStage(l *ledger.Ledger, ms modelStage, a Attempt) error {
	if _, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: ms.stage, Attempt: a.Attempt, Outcome: "accepted"}}); err != nil {
		return err
	}
	delete(r.Uncompleted, ms.stage)
	if ms.accepted != nil {
		return ms.accepted(l, a)
	}
	return nil
}

// evidence settles interrupted attempt n of ms from its session ledger and artifact. It
// returns the attempt record to write (accepted or failed), or nil and why the outcome is
// unknown.
func (r *Run) evidence(env Env, ms modelStage, n int) (*Attempt, string, error) {
	a := &Attempt{Stage: ms.stage, Attempt: n, Reason: ReasonInterrupted}
	dir := filepath.Join("runs", r.ID, "stages", fmt.Sprintf("%s-%d", ms.stage, n))
	sdir := filepath.Join(env.Home, dir)
	// The session: none (never created, or its header never reached the file), or one that
	// verifies and is reduced, or unreadable.
	var st *session.State
	var sessErr error
	if fi, err := os.Stat(filepath.Join(sdir, ledger.FileName)); err == nil && fi.Size() > 0 {
		st, _, sessErr = session.LoadAs(sdir, fmt.Sprintf("%s-%s-%d", r.ID, ms.stage, n))
		if sessErr == nil {
			a.Session = SessionAnchor{ID: st.Header.ID, Dir: filepath.ToSlash(dir)}
			if sl, _, err := ledger.OpenReadOnly(sdir, ledger.Options{}); err == nil {
				a.Session.Seq, a.Session.Hash = sl.Head()
				sl.Close()
			}
			for _, e := range st.Order {
				if e.Message.Role == llm.RoleAssistant {
					a.Turns++
				}
			}
			u := st.Usage
			a.Tokens, a.CostUSD = u.Input+u.Output+u.CacheRead+u.CacheWrite, u.Cost.Total
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		sessErr = err
	}
	var accepted []string
	if st != nil {
		for _, e := range st.Order {
			m := e.Message
			if m.ToolName != contract.ToolName || m.IsError || len(m.Details) == 0 {
				continue
			}
			var d struct{ Digest string }
			if json.Unmarshal(m.Details, &d) == nil && d.Digest != "" {
				accepted = append(accepted, d.Digest)
			}
		}
	}
	rel := RunsDir + "/" + r.ID + "/" + ms.file(n)
	data, err := os.ReadFile(filepath.Join(r.Project, filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		switch {
		case sessErr != nil:
			return nil, "no artifact, and the session ledger does not verify: " + sessErr.Error(), nil
		case len(accepted) > 0:
			return nil, fmt.Sprintf("the session shows an accepted submission (%s) but %s is missing", accepted[0], rel), nil
		}
		a.Outcome, a.Cause = "failed", &Cause{Code: CauseInterrupted}
		a.Detail = "interrupted before a contract was accepted (no artifact, no accepted submission in the session); settled by resume"
		return a, "", nil
	} else if err != nil {
		return nil, "", err
	}
	if sessErr != nil {
		return nil, fmt.Sprintf("%s exists but the session ledger does not verify: %v", rel, sessErr), nil
	}
	digest, err := r.artifactContract(ms, data)
	if err != nil {
		return nil, fmt.Sprintf("%s exists but its contract does not validate: %v", rel, err), nil
	}
	if len(accepted) > 0 && !strings.EqualFold(accepted[len(accepted)-1], digest) {
		return nil, fmt.Sprintf("%s holds contract %s but the session accepted %s", rel, digest, accepted[len(accepted)-1]), nil
	}
	ref, err := artifact.NewReference(ms.art, rel, data)
	if err != nil {
		return nil, "", err
	}
	a.Outcome, a.Artifact, a.Contract = "accepted", &ref, artifact.Digest(digest)
	a.Detail = "interrupted after its contract was accepted and stored; settled by resume from the artifact"
	if len(accepted) > 0 {
		a.Detail += " and the session's accepted submission"
	}
	return a, "", nil
}

// artifactContract validates the contract an artifact of ms holds, as the attempt's tool did,
// and returns its digest.
func (r *Run) artifactContract(ms modelStage, data []byte) (string, error) {
	var raw json.RawMessage
	if err := decodeArtifact(data, &raw); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	pack, err := ms.pack()
	if err != nil {
		return "", err
	}
	refs := contract.PackRefs(pack)
	if ms.refs != nil {
		refs = ms.refs(pack)
	}
	c, err := contract.For(ms.kind)
	if err != nil {
		return "", err
	}
	acc, err := c.Validate(buf.Bytes(), refs)
	if err != nil {
		return "", err
	}
	return acc.Digest, nil
}
