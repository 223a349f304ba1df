package run

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/run/contract"
)

// Final Checklist.
const (
	// ArtChecklist is the artifact id of the Final Checklist's traceability matrix.
	ArtChecklist = "final-checklist"
	// BlockChecklistUncovered: an approved specification item maps to no ticket of the
	// approved plan, or a ticket of the plan has no accepted candidate.
	BlockChecklistUncovered = "run_checklist_uncovered"
	// BlockChecklistUnverified: an accepted ticket's verification artifact does not record a
	// passing verification of its candidate's commit.
	BlockChecklistUnverified = "run_checklist_unverified"
)

// Checklist is the digest-bound content of the final-checklist artifact: every item of the
// approved specification with the tickets that implement it, and every ticket with its
// accepted candidate and whether its verification passed.
type Checklist struct {
	Spec    artifact.Digest  `json:"spec"`
	Plan    artifact.Digest  `json:"plan"`
	Items   []ChecklistItem  `json:"items"`
	Tickets []ChecklistEntry `json:"tickets"`
}

// ChecklistItem is one specification item and the tickets that cite it.
type ChecklistItem struct {
	Item    string   `json:"item"`
	Tickets []string `json:"tickets"`
}

// ChecklistEntry is one ticket of the plan: its accepted candidate ("" when none) and
// whether its verification passed on that candidate's commit.
type ChecklistEntry struct {
	Ticket       string          `json:"ticket"`
	Candidate    string          `json:"candidate"`
	Verification artifact.Digest `json:"verification"`
	Verified     bool            `json:"verified"`
}

// checklistStage checks traceability and records the matrix as final-checklist[-n].md.
func (r *Run) checklistStage() checkStage {
	return checkStage{stage: StageFinalChecklist, run: func(ctx context.Context, env Env, n int) (*artifact.Reference, []Blocker, error) {
		c, bs, err := r.checklist()
		if err != nil {
			return nil, nil, err
		}
		ref, err := r.writeStageArtifact(env, ArtChecklist, "Final Checklist", StageFinalChecklist, n, c)
		return &ref, bs, err
	}}
}

// checklist builds the traceability matrix and the blockers naming what it does not cover.
func (r *Run) checklist() (Checklist, []Blocker, error) {
	specRef, spec, err := r.approvedSpec()
	if err != nil {
		return Checklist{}, nil, err
	}
	planRef, plan, err := r.approvedPlan()
	if err != nil {
		return Checklist{}, nil, err
	}
	c, bs := r.traceability(specRef.Digest, spec, planRef.Digest, plan)
	return c, bs, nil
}

// traceability maps every item of spec to the tickets of plan that cite it and every ticket
// to its accepted, verified candidate; the blockers name what is not covered.
func (r *Run) traceability(specDigest artifact.Digest, spec *contract.Specification, planDigest artifact.Digest, plan *contract.TicketPlan) (Checklist, []Blocker) {
	c := Checklist{Spec: specDigest, Plan: planDigest, Items: []ChecklistItem{}, Tickets: []ChecklistEntry{}}
	var uncovered, unaccepted, unverified []string
	for _, item := range spec.ItemIDs() {
		ci := ChecklistItem{Item: item, Tickets: []string{}}
		for _, t := range plan.Tickets {
			if slices.Contains(t.SpecItemIDs, item) {
				ci.Tickets = append(ci.Tickets, t.ID)
			}
		}
		if len(ci.Tickets) == 0 {
			uncovered = append(uncovered, item)
		}
		c.Items = append(c.Items, ci)
	}
	for _, t := range plan.Tickets {
		e := ChecklistEntry{Ticket: t.ID}
		a, ok := r.Accepted[t.ID]
		if !ok {
			unaccepted = append(unaccepted, t.ID)
			c.Tickets = append(c.Tickets, e)
			continue
		}
		e.Candidate, e.Verification = a.Candidate.Digest, a.Verification.Digest
		e.Verified = r.verifiedAt(a.Verification, a.Candidate.Head)
		if !e.Verified {
			unverified = append(unverified, t.ID)
		}
		c.Tickets = append(c.Tickets, e)
	}
	var bs []Blocker
	recovery := []string{"abort the run (rein run abort " + r.ID + ") and start a new one whose plan covers the specification"}
	if len(uncovered) > 0 {
		bs = append(bs, Blocker{Code: BlockChecklistUncovered, Stage: StageFinalChecklist, Recovery: recovery,
			Detail: "specification items covered by no ticket of the approved plan: " + strings.Join(uncovered, ", ")})
	}
	if len(unaccepted) > 0 {
		bs = append(bs, Blocker{Code: BlockChecklistUncovered, Stage: StageFinalChecklist, Recovery: recovery,
			Detail: "tickets of the approved plan without an accepted candidate: " + strings.Join(unaccepted, ", ")})
	}
	if len(unverified) > 0 {
		bs = append(bs, Blocker{Code: BlockChecklistUnverified, Stage: StageFinalChecklist,
			Detail:   "accepted tickets whose verification artifact records no passing verification of the candidate's commit: " + strings.Join(unverified, ", "),
			Recovery: []string{"restore the tickets' verification artifacts, " + r.recheck(), "abort the run (rein run abort " + r.ID + ")"}})
	}
	return c, bs
}

// verifiedAt reports whether ref is an intact verification artifact recording a passing
// verification of commit.
func (r *Run) verifiedAt(ref artifact.Reference, commit string) bool {
	data, err := r.readRef(ref)
	if err != nil {
		return false
	}
	var v VerificationReport
	if err := decodeArtifact(data, &v); err != nil {
		return false
	}
	return v.Passed && v.Commit == commit
}

// writeStageArtifact writes the immutable artifact id of attempt n of stage (id.md, then
// id-n.md) holding v, and returns its reference.
func (r *Run) writeStageArtifact(env Env, id, title, stage string, n int, v any) (artifact.Reference, error) {
	rel := RunsDir + "/" + r.ID + "/" + attemptFile(id)(n)
	data := renderStageArtifact(r.ID, id, title, stage, n, env.now(), v)
	ref, err := artifact.NewReference(id, rel, data)
	if err != nil {
		return ref, err
	}
	return ref, writeImmutable(filepath.Join(r.Project, filepath.FromSlash(rel)), data)
}
