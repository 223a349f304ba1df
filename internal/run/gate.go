package run

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// gateDef is what distinguishes one gate from another: its workflow stage, the model stage
// whose artifact it decides on (and that a rejection sends back), the artifact's name and the
// id of the rejection-reason artifact.
type gateDef struct {
	stage, model, what, rejection, title string
	// artifact finds the artifact decided on when it is no model stage's (the run gate's
	// delivery summary); nil: the latest accepted artifact of model.
	artifact func(r *Run) (*artifact.Reference, bool)
}

// gates are the gates by name: a list the compiler lays out (a map literal would be built by a
// package initializer at every start).
var gates = [...]struct {
	name string
	def  gateDef
}{
	{GateSpec, gateDef{stage: StageSpecGate, model: StageSpecification, what: "specification", rejection: ArtSpecRejection, title: "Spec Gate rejection"}},
	{GateTicketPlan, gateDef{stage: StageTicketPlanGate, model: StageTicketPlanning, what: "ticket plan", rejection: ArtPlanRejection, title: "Ticket Plan Gate rejection"}},
	{GateRun, gateDef{stage: StageRunAcceptance, model: StageFullVerification, what: "delivery summary", artifact: (*Run).summaryArtifact}},
}

// gateOf returns the gate named name.
func gateOf(name string) (gateDef, bool) {
	for _, g := range gates {
		if g.name == name {
			return g.def, true
		}
	}
	return gateDef{}, false
}

// gateFor is the gate named name; the zero gateDef when there is none.
func gateFor(name string) gateDef {
	g, _ := gateOf(name)
	return g
}

// gateArtifact returns the artifact awaiting gate's decision.
func (r *Run) gateArtifact(gate string) (*artifact.Reference, bool) {
	if g := gateFor(gate); g.artifact != nil {
		return g.artifact(r)
	}
	return r.accepted(gateFor(gate).model)
}

// attemptFile names the artifact of attempt n: id.md for the first, id-n.md later.
func attemptFile(id string) func(int) string {
	return func(n int) string {
		if n == 1 {
			return id + ".md"
		}
		return fmt.Sprintf("%s-%d.md", id, n)
	}
}

// openGate opens run id for a decision at gate and returns the artifact awaiting it. A gate
// whose approval is no longer valid (stale) may be rejected after the run moved on (reject).
func openGate(env Env, id, gate string, reject bool) (*Run, *ledger.Ledger, artifact.Reference, error) {
	var ref artifact.Reference
	g, ok := gateOf(gate)
	if !ok {
		return nil, nil, ref, fmt.Errorf("%w: gate %q: the gates are spec, ticket-plan and run", ErrUsage, gate)
	}
	r, l, err := env.openRun(id)
	if err != nil {
		return nil, nil, ref, err
	}
	fail := func(err error) (*Run, *ledger.Ledger, artifact.Reference, error) {
		l.Close()
		return nil, nil, ref, err
	}
	if r.Aborted {
		return fail(fmt.Errorf("%w: run %s was aborted", ErrFinished, id))
	}
	if err := r.reconcileAndRecord(env, l); err != nil {
		return fail(err)
	}
	if err := r.checkEvidence(env); err != nil {
		return fail(err)
	}
	if r.Stage != g.stage {
		if reject {
			if ds := r.Gates[gate]; len(ds) > 0 && ds[len(ds)-1].Decision == GateApproved && r.approvalInvalid(gate) {
				return r, l, ds[len(ds)-1].Artifact, nil
			}
		}
		return fail(fmt.Errorf("%w: run %s is at stage %s; the %s gate is not open", ErrNotRunnable, id, r.Stage, gate))
	}
	art, ok := r.gateArtifact(gate)
	if !ok {
		return fail(fmt.Errorf("run %s has no accepted %s", id, g.what))
	}
	if _, err := r.readRef(*art); err != nil {
		return fail(&BlockedError{RunID: id, Blockers: []Blocker{{Code: BlockArtifactTampered, Stage: g.stage,
			Detail: fmt.Sprintf("the %s awaiting the gate, artifact %s (%s): %v; the run ledger recorded file digest %s", g.what, art.ID, art.Path, err, art.FileDigest),
			Recovery: []string{"restore " + art.Path + " to its recorded bytes (file digest " + string(art.FileDigest) + ")",
				"abort the run (rein run abort " + id + ") and start a new one"}}}})
	}
	return r, l, *art, nil
}

// approvalInvalid reports whether gate's latest approval no longer holds.
func (r *Run) approvalInvalid(gate string) bool {
	st, err := r.staleness()
	if err != nil {
		return true
	}
	for _, a := range st.Invalid() {
		if a.ID == gate {
			return true
		}
	}
	return false
}

// ApproveGate approves gate of run id when digest equals the current artifact's digest.
func ApproveGate(env Env, id, gate string, digest artifact.Digest, by string) (artifact.Reference, error) {
	r, l, art, err := openGate(env, id, gate, false)
	if err != nil {
		return art, err
	}
	defer l.Close()
	g := gateFor(gate)
	if n, ok := r.Uncompleted[g.stage]; ok {
		d := r.Gates[gate][n-1]
		return art, fmt.Errorf("%w: run %s's approval of the %s (%s, by %s) is already recorded, but a crash interrupted the run before it moved on; run `rein run resume %s` to complete it (it is never recorded twice)",
			ErrNotRunnable, id, g.what, d.Digest, d.By, id)
	}
	if digest != art.Digest {
		return art, fmt.Errorf("%w: --digest %s is not the current %s's digest %s (%s); review that artifact and approve its digest", ErrGateDigest, digest, g.what, art.Digest, art.Path)
	}
	if gate == GateRun {
		if err := r.checkDelivery(context.Background()); err != nil {
			return art, err
		}
	}
	d := GateDecision{Gate: gate, Decision: GateApproved, Digest: art.Digest, Artifact: art, By: by, At: env.now().Truncate(time.Second)}
	if _, err := l.Append(ledger.Entry{Kind: KindGateDecision, Body: d}); err != nil {
		return art, err
	}
	// From here the approval is recorded: a crash before the stage.completed record leaves it
	// to resume (settleApproval), which completes it without asking again.
	env.crash("approval")
	return art, r.completeApproval(env, l, gate, len(r.Gates[gate])+1, art)
}

// completeApproval records the stage.completed of gate's approval n (and, for the run gate,
// Delivery Ready).
func (r *Run) completeApproval(env Env, l *ledger.Ledger, gate string, n int, art artifact.Reference) error {
	g := gateFor(gate)
	if _, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: g.stage, Attempt: n, Outcome: GateApproved}}); err != nil {
		return err
	}
	r.Stage = DeliveryWorkflow().Next(g.stage)
	delete(r.Uncompleted, g.stage)
	if gate == GateRun {
		return r.recordReady(env, l, art)
	}
	return nil
}

// RejectGate records reason as an input artifact and sends the gate's stage back. It also
// withdraws an approval that went stale after the run moved on.
func RejectGate(env Env, id, gate, reason, by string) (artifact.Reference, error) {
	var ref artifact.Reference
	if strings.TrimSpace(reason) == "" {
		return ref, fmt.Errorf("%w: a rejection needs --reason TEXT", ErrUsage)
	}
	if gate == GateRun {
		return ref, fmt.Errorf("%w: the run gate sends nothing back: to refuse the delivery, abort the run (rein run abort %s)", ErrUsage, id)
	}
	r, l, art, err := openGate(env, id, gate, true)
	if err != nil {
		return ref, err
	}
	defer l.Close()
	g := gateFor(gate)
	n := len(r.Gates[gate]) + 1
	rel := fmt.Sprintf("%s/%s/%s-%d.md", RunsDir, id, g.rejection, n)
	body := rejectionBody{Gate: gate, Digest: art.Digest, Reason: reason, By: by}
	data := renderStageArtifact(id, g.rejection, g.title, g.stage, n, env.now(), body)
	if ref, err = artifact.NewReference(g.rejection, rel, data); err != nil {
		return ref, fmt.Errorf("%w: rejection: %w", ErrUsage, err)
	}
	if err := writeImmutable(filepath.Join(r.Project, filepath.FromSlash(rel)), data); err != nil {
		return ref, err
	}
	env.crash("rejection")
	d := GateDecision{Gate: gate, Decision: GateRejected, Digest: art.Digest, Artifact: art, Reason: &ref, By: by, At: env.now().Truncate(time.Second)}
	_, err = l.Append(ledger.Entry{Kind: KindGateDecision, Body: d})
	return ref, err
}

// GateStage returns the model stage gate sends back on rejection ("" for an unknown gate).
func GateStage(gate string) string { return gateFor(gate).model }

// gateReport states a gate: pending, awaiting approval (with the current digest), approved
// (with the approved digest), or stale when the approved artifact, or something it was made
// from, changed.
func (r *Run) gateReport(s WorkflowStage, st *artifact.Report) GateReport {
	g := GateReport{Gate: s.Gate, Stage: s.ID, State: "pending"}
	def, ok := gateOf(s.Gate)
	if !ok {
		return g
	}
	ds := r.Gates[s.Gate]
	if len(ds) > 0 && ds[len(ds)-1].Decision == GateApproved && !r.passed(def.stage) {
		d := ds[len(ds)-1]
		g.State, g.Digest, g.By = "stale", string(d.Digest), d.By
		g.Detail = fmt.Sprintf("the earlier approval of %s no longer applies: the run went back to %s%s", d.Digest, r.Stage, r.invalidatedBy(s.Gate))
		if r.Stage != def.stage {
			return g
		}
		g.By, g.Detail = "", fmt.Sprintf("the earlier approval of %s no longer applies%s: approve the current %s", d.Digest, r.invalidatedBy(s.Gate), def.what)
	} else if len(ds) > 0 && ds[len(ds)-1].Decision == GateApproved {
		d := ds[len(ds)-1]
		g.State, g.Digest, g.By = GateApproved, string(d.Digest), d.By
		if st != nil {
			for _, a := range st.Invalid() {
				if a.ID != s.Gate {
					continue
				}
				g.State = "stale"
				if a.Status == artifact.ApprovalChanged {
					g.Detail = fmt.Sprintf("the approved artifact changed: %s now has digest %s", d.Artifact.Path, orDash(string(a.Current)))
				} else {
					g.Detail = "made from an input that changed: " + strings.Join(staleCauses(st, a.Artifact), ", ")
				}
			}
		}
		return g
	}
	if r.Stage == def.stage {
		if art, ok := r.gateArtifact(s.Gate); ok {
			g.State, g.Digest = "awaiting approval", string(art.Digest)
		}
	} else if len(ds) > 0 {
		g.State, g.Digest, g.By = GateRejected, string(ds[len(ds)-1].Digest), ds[len(ds)-1].By
	}
	return g
}

func staleCauses(st *artifact.Report, id string) []string {
	for _, s := range st.Stale {
		if s.ID == id {
			return s.Causes
		}
	}
	return nil
}
