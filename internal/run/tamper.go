package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// Blocker codes of the run's recorded evidence. Like run_artifact_stale they are reported,
// never recorded: restoring what changed resolves them.
const (
	// BlockArtifactTampered: an artifact the run ledger references — Preflight, a rejection
	// reason, an accepted contract the run has not yet built on — was edited, replaced or
	// removed: its bytes no longer have the file digest the ledger recorded. (The requirement,
	// its snapshot and the execution lock are reconciled as run_requirement_drift and
	// run_lock_tampered; a changed artifact of the graph is run_artifact_stale.)
	BlockArtifactTampered = "run_artifact_tampered"
	// BlockStageSessionRolledBack: a stage session's ledger no longer holds the head its
	// stage.attempt record anchored (replaced by an older copy, or removed).
	BlockStageSessionRolledBack = "run_stage_session_rolled_back"
	// BlockStageSessionCorrupt: a stage session's ledger does not verify, or its header names
	// another session than the one its stage.attempt record names.
	BlockStageSessionCorrupt = "run_stage_session_corrupt"
)

// evidenceBlockers checks what the run ledger references beyond the locked inputs: every
// artifact outside the graph (see tamperBlockers) and every stage session's anchored head.
func (r *Run) evidenceBlockers(env Env) []Blocker {
	return slices.Concat(r.tamperBlockers(), r.sessionBlockers(env), r.ticketEvidenceBlockers(env))
}

// checkEvidence returns a *BlockedError for the evidence blockers, or nil.
func (r *Run) checkEvidence(env Env) error {
	if bs := r.evidenceBlockers(env); len(bs) > 0 {
		return &BlockedError{RunID: r.ID, Blockers: bs}
	}
	return nil
}

// referenced is every artifact the run ledger references besides the requirement, its
// snapshot and the execution lock, each once, in ledger order: Preflight, the accepted
// contracts, the clarification, the rejection reasons and the artifacts gates decided on.
func (r *Run) referenced() []artifact.Reference {
	var refs []artifact.Reference
	add := func(ref *artifact.Reference) {
		if ref != nil && !slices.ContainsFunc(refs, func(o artifact.Reference) bool { return o.Path == ref.Path }) {
			refs = append(refs, *ref)
		}
	}
	add(r.Preflight)
	for _, s := range DeliveryWorkflow().Stages {
		for _, a := range r.StageAttempts[s.ID] {
			add(a.Artifact)
		}
	}
	add(r.Clarification)
	for _, c := range r.Relock.Dropped {
		add(&c)
	}
	for _, c := range r.deliveryArtifacts() {
		add(&c)
	}
	for _, gate := range []string{GateSpec, GateTicketPlan} {
		for _, d := range r.Gates[gate] {
			add(d.Reason)
			add(&d.Artifact)
		}
	}
	return refs
}

// tamperBlockers checks every referenced artifact against the file digest the ledger
// recorded, except two kinds: the graph's artifacts, whose changes staleness reports (and a
// gate's rejection resolves), and the artifacts a gate rejected, which the run no longer uses.
func (r *Run) tamperBlockers() []Blocker {
	skip := map[string]bool{}
	paths := r.graphPaths()
	for _, n := range r.graph().Nodes {
		skip[paths[n.ID]] = true
	}
	for _, gate := range []string{GateSpec, GateTicketPlan} {
		for _, d := range r.Gates[gate] {
			if d.Decision == GateRejected {
				skip[d.Artifact.Path] = true
			}
		}
	}
	var bs []Blocker
	for _, ref := range r.referenced() {
		if skip[ref.Path] {
			continue
		}
		found, err := FileDigest(resolve(r.Project, ref.Path))
		var what string
		switch {
		case errors.Is(err, os.ErrNotExist):
			what = "is missing"
		case err != nil:
			what = "cannot be read (" + err.Error() + ")"
		case found != ref.FileDigest:
			what = "has file digest " + string(found)
		default:
			continue
		}
		bs = append(bs, Blocker{Code: BlockArtifactTampered, Stage: r.Stage,
			Detail: fmt.Sprintf("artifact %s (%s) %s; the run ledger recorded file digest %s", ref.ID, ref.Path, what, ref.FileDigest),
			Recovery: []string{
				"restore " + ref.Path + " to its recorded bytes (file digest " + string(ref.FileDigest) + "), e.g. from version control or a backup",
				"abort the run (rein run abort " + r.ID + ") and start a new one"}})
	}
	return bs
}

// sessionBlockers checks each settled attempt's stage session against the head its
// stage.attempt record anchored.
func (r *Run) sessionBlockers(env Env) []Blocker {
	var bs []Blocker
	for _, s := range DeliveryWorkflow().Stages {
		for _, a := range r.StageAttempts[s.ID] {
			if b := r.sessionBlocker(env, a); b != nil {
				bs = append(bs, *b)
			}
		}
	}
	return bs
}

func (r *Run) sessionBlocker(env Env, a Attempt) *Blocker {
	sa := a.Session
	if sa.Seq == 0 {
		return nil // no session was created for the attempt
	}
	where := "$REIN_HOME/" + sa.Dir
	block := func(code, detail string) *Blocker {
		return &Blocker{Code: code, Stage: r.Stage,
			Detail: fmt.Sprintf("%s attempt %d's session %s (%s) %s", a.Stage, a.Attempt, sa.ID, where, detail),
			Recovery: []string{
				"restore the session ledger " + where + " from a backup (its anchored head is seq " + fmt.Sprint(sa.Seq) + " hash " + sa.Hash + ")",
				"abort the run (rein run abort " + r.ID + ") and start a new one"}}
	}
	rel := filepath.FromSlash(sa.Dir)
	if !filepath.IsLocal(rel) {
		return block(BlockStageSessionCorrupt, "is not under $REIN_HOME")
	}
	dir := filepath.Join(env.Home, rel)
	if _, err := os.Stat(filepath.Join(dir, ledger.FileName)); errors.Is(err, os.ErrNotExist) {
		return block(BlockStageSessionRolledBack, fmt.Sprintf("is gone; the run ledger anchored seq %d hash %s", sa.Seq, sa.Hash))
	}
	l, _, err := ledger.OpenReadOnly(dir, ledger.Options{FS: env.SessionFS})
	if err != nil {
		return block(BlockStageSessionCorrupt, "does not verify: "+err.Error())
	}
	defer l.Close()
	if h := l.Header(); h.ID != sa.ID {
		return block(BlockStageSessionCorrupt, fmt.Sprintf("holds the ledger of session %q", h.ID))
	}
	if err := l.CheckAnchor(sa.Seq, sa.Hash); err != nil {
		seq, hash := l.Head()
		return block(BlockStageSessionRolledBack, fmt.Sprintf("was rolled back: the run ledger anchored seq %d hash %s, the session's head is seq %d hash %s", sa.Seq, sa.Hash, seq, hash))
	}
	return nil
}
