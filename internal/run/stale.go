package run

import (
	"fmt"
	"os"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
)

// BlockStale: an approved artifact, or one a later stage was made from, changed after it was
// approved or used. It is reported, never recorded: restoring the artifact or rejecting the
// gate resolves it.
const BlockStale = "run_artifact_stale"

// stageIndex is the position of stage id in the delivery workflow (-1 when unknown).
func stageIndex(id string) int {
	for i, s := range DeliveryWorkflow().Stages {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// passed reports whether the run is past stage id.
func (r *Run) passed(id string) bool { return stageIndex(id) < stageIndex(r.Stage) }

// graph is the run's artifact graph: snapshot → research → clarification → specification →
// ticket plan, each node with the digests of the inputs it was made from as the ledger
// recorded them, and the gate approvals bound to digests. Only what the run has passed is in
// it: a stage sent back by a rejection drops what came after.
func (r *Run) graph() artifact.Graph {
	var g artifact.Graph
	snap, ok := r.ref(ArtSnapshot)
	if !ok {
		return g
	}
	g.Nodes = append(g.Nodes, artifact.Node{ID: ArtSnapshot, Digest: snap.Digest})
	in := []artifact.Input{{ID: ArtSnapshot, Digest: snap.Digest}}
	res, ok := r.accepted(StageResearch)
	if !ok || !r.passed(StageResearch) {
		return g
	}
	g.Nodes = append(g.Nodes, artifact.Node{ID: ArtResearch, Digest: res.Digest, Inputs: in})
	in = append(in, artifact.Input{ID: ArtResearch, Digest: res.Digest})
	if c := r.Clarification; c != nil {
		g.Nodes = append(g.Nodes, artifact.Node{ID: ArtClarification, Digest: c.Digest, Inputs: []artifact.Input{{ID: ArtResearch, Digest: res.Digest}}})
		in = append(in, artifact.Input{ID: ArtClarification, Digest: c.Digest})
	}
	spec, ok := r.accepted(StageSpecification)
	if !ok || !r.passed(StageSpecification) {
		return g
	}
	g.Nodes = append(g.Nodes, artifact.Node{ID: ArtSpec, Digest: spec.Digest, Inputs: in})
	if !r.passed(StageSpecGate) {
		return g
	}
	ds := r.Gates[GateSpec]
	if len(ds) == 0 || ds[len(ds)-1].Decision != GateApproved {
		return g
	}
	g.Approvals = append(g.Approvals, artifact.Approval{ID: GateSpec, Artifact: ArtSpec, Digest: ds[len(ds)-1].Digest})
	plan, ok := r.accepted(StageTicketPlanning)
	if !ok || !r.passed(StageTicketPlanning) {
		return g
	}
	g.Nodes = append(g.Nodes, artifact.Node{ID: ArtTicketPlan, Digest: plan.Digest, Inputs: []artifact.Input{{ID: ArtSpec, Digest: ds[len(ds)-1].Digest}}})
	if !r.passed(StageTicketPlanGate) {
		return g
	}
	if ds := r.Gates[GateTicketPlan]; len(ds) > 0 && ds[len(ds)-1].Decision == GateApproved {
		g.Approvals = append(g.Approvals, artifact.Approval{ID: GateTicketPlan, Artifact: ArtTicketPlan, Digest: ds[len(ds)-1].Digest})
	}
	return g
}

// currentDigests reads the artifacts of the graph's nodes and returns their digests now; an
// artifact that is gone or unreadable has none.
func (r *Run) currentDigests() map[string]artifact.Digest {
	cur := map[string]artifact.Digest{}
	for id, p := range r.graphPaths() {
		data, err := os.ReadFile(resolve(r.Project, p))
		if err != nil {
			continue
		}
		if ref, err := artifact.NewReference(id, p, data); err == nil {
			cur[id] = ref.Digest
		}
	}
	return cur
}

// graphPaths maps the ids the artifact graph may hold to their artifacts' paths.
func (r *Run) graphPaths() map[string]string {
	paths := map[string]string{}
	if ref, ok := r.ref(ArtSnapshot); ok {
		paths[ArtSnapshot] = ref.Path
	}
	for stage, id := range map[string]string{StageResearch: ArtResearch, StageSpecification: ArtSpec, StageTicketPlanning: ArtTicketPlan} {
		if ref, ok := r.accepted(stage); ok {
			paths[id] = ref.Path
		}
	}
	if c := r.Clarification; c != nil {
		paths[ArtClarification] = c.Path
	}
	return paths
}

// staleness checks the run's graph against the artifacts' current digests.
func (r *Run) staleness() (artifact.Report, error) {
	return r.graph().Check(r.currentDigests())
}

// staleBlocker returns the blocker of stale artifacts and invalid approvals, or nil.
func (r *Run) staleBlocker() (*Blocker, error) {
	st, err := r.staleness()
	if err != nil {
		return nil, err
	}
	var what []string
	for _, c := range st.Changed {
		what = append(what, fmt.Sprintf("%s changed (digest %s, recorded %s)", c.ID, orDash(string(c.Current)), c.Recorded))
	}
	for _, s := range st.Stale {
		what = append(what, fmt.Sprintf("%s is stale (made from changed %s)", s.ID, strings.Join(s.Causes, ", ")))
	}
	var recovery []string
	for _, a := range st.Invalid() {
		what = append(what, fmt.Sprintf("the %s gate's approval is %s", a.ID, a.Status))
		recovery = append(recovery, fmt.Sprintf("reject the %s gate to redo %s and approve it anew: rein run reject %s --gate %s --reason TEXT", a.ID, GateStage(a.ID), r.ID, a.ID))
	}
	if len(what) == 0 {
		return nil, nil
	}
	recovery = append([]string{"restore the changed artifact(s) to their recorded digest"}, recovery...)
	recovery = append(recovery, "abort the run (rein run abort "+r.ID+") and start a new one")
	return &Blocker{Code: BlockStale, Stage: r.Stage, Detail: strings.Join(what, "; "), Recovery: recovery}, nil
}
