package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// KindLockAmended records a relock: a person adopted a drifted input into the run's lock. Its
// body is a [LockAmendment].
const KindLockAmended = "lock.amended"

// ArtLockAmendment is the artifact id of an execution-lock amendment
// (execution-lock-amendment-<n>.md).
const ArtLockAmendment = "execution-lock-amendment"

var (
	// ErrNotDrifted: a relock named an input that matches the lock (nothing to relock).
	ErrNotDrifted error = usageError("the input has not drifted")
	// ErrNotRelockable: the input may never be relocked (the requirement, the workflow, the
	// execution lock itself), or cannot be now; the error names the recovery.
	ErrNotRelockable = errors.New("input cannot be relocked")
)

// LockAmendment is the body of a lock.amended record: which input was relocked from which
// digest to which, who decided and when, the amendment artifact holding the lock in force
// from then on, and what the relock invalidated through the staleness graph.
type LockAmendment struct {
	N         int                `json:"n"`
	Input     string             `json:"input"`
	OldDigest artifact.Digest    `json:"oldDigest"`
	NewDigest artifact.Digest    `json:"newDigest"`
	Approver  string             `json:"approver"`
	At        time.Time          `json:"at"`
	Artifact  artifact.Reference `json:"artifact"`
	// Changed lists every locked input whose value changed (a profile relock may change
	// several: guidance, skills, model policies, verification).
	Changed []string `json:"changed"`
	// Stale lists the artifacts made from a changed input, directly or downstream; Gates the
	// gate approvals that no longer hold.
	Stale []string `json:"stale"`
	Gates []string `json:"gates"`
	// RestartStage is the earliest stage that re-runs ("" when no stage had used a changed
	// input yet).
	RestartStage string `json:"restartStage,omitempty"`
}

// amendmentContent is the digest-bound content of an amendment artifact: the relock's
// decision and the execution lock in force after it.
type amendmentContent struct {
	Amends       artifact.Digest `json:"amends"` // the digest of the lock or amendment it supersedes
	Input        string          `json:"input"`
	OldDigest    artifact.Digest `json:"oldDigest"`
	NewDigest    artifact.Digest `json:"newDigest"`
	Approver     string          `json:"approver"`
	At           time.Time       `json:"at"`
	Changed      []string        `json:"changed"`
	Stale        []string        `json:"stale"`
	Gates        []string        `json:"gates"`
	RestartStage string          `json:"restartStage,omitempty"`
	Lock         Lock            `json:"lock"`
}

// relockState is what the run ledger's relocks left: the amendments in order, and the
// clarifications a restart before Clarification superseded.
type relockState struct {
	Amendments []LockAmendment
	Dropped    []artifact.Reference
}

// applyAmended applies a lock.amended record: the run goes back to its restart stage (when it
// had reached it), each model stage from there on starts a new round of attempts, the stages
// from there on are no longer completed, and a clarification made before is superseded.
func (r *Run) applyAmended(body json.RawMessage) error {
	var a LockAmendment
	if err := json.Unmarshal(body, &a); err != nil {
		return err
	}
	r.restartAt(a)
	return nil
}

func (r *Run) restartAt(a LockAmendment) {
	r.Relock.Amendments = append(r.Relock.Amendments, a)
	at := stageIndex(a.RestartStage)
	if a.RestartStage == "" || at < 0 || at > stageIndex(r.Stage) {
		return
	}
	r.Stage = a.RestartStage
	for _, s := range DeliveryWorkflow().Stages {
		if s.Kind == KindModel && stageIndex(s.ID) >= at {
			r.RoundStart[s.ID] = r.Attempts[s.ID]
		}
	}
	r.Completed = slices.DeleteFunc(r.Completed, func(s string) bool { return stageIndex(s) >= at })
	if at <= stageIndex(StageClarification) && r.Clarification != nil {
		r.Relock.Dropped = append(r.Relock.Dropped, *r.Clarification)
		r.Clarification = nil
	}
}

// clarificationFile names the next clarification artifact: clarification.md, then
// clarification-<n>.md after a relock superseded earlier answers.
func (r *Run) clarificationFile() string {
	return attemptFile(ArtClarification)(len(r.Relock.Dropped) + 1)
}

// effectiveLock applies the run's amendments to its execution lock: each amendment artifact
// is read and checked against the file digest the ledger recorded, and the last one's lock is
// the one in force.
func (r *Run) effectiveLock(lock Lock) (Lock, error) {
	for _, a := range r.Relock.Amendments {
		data, err := r.readRef(a.Artifact)
		if err != nil {
			return lock, fmt.Errorf("amendment %d: %w", a.N, err)
		}
		var c amendmentContent
		if err := decodeArtifact(data, &c); err != nil {
			return lock, fmt.Errorf("amendment %d (%s): %w", a.N, a.Artifact.Path, err)
		}
		lock = c.Lock
	}
	return lock, nil
}

// relockable says whether input may be relocked; it returns the refusal when not.
func relockable(id, input string) error {
	switch {
	case strings.HasPrefix(input, "guidance:"), strings.HasPrefix(input, "skill:"), input == InputProfile, input == InputHarness:
		return nil
	case strings.HasPrefix(input, "models."):
		return fmt.Errorf("%w: %s is part of the profile: approve the edited profile (`rein profile approve`) and relock the profile: rein run relock %s --input profile", ErrNotRelockable, input, id)
	case input == InputRequirement:
		return fmt.Errorf("%w: the requirement is the run's identity (its snapshot is immutable): restore the requirement source to the snapshot's content, or abort the run (rein run abort %s) and start a new one on the new requirement", ErrNotRelockable, id)
	case input == InputWorkflow:
		return fmt.Errorf("%w: the workflow is the stage structure the run ledger follows: continue with a harness that runs the locked workflow, or abort the run (rein run abort %s) and start a new one", ErrNotRelockable, id)
	case input == InputLock:
		return fmt.Errorf("%w: the execution lock was changed on disk, which no decision can adopt: restore the run's execution-lock.md (and its amendments) from version control or a backup, or abort the run (rein run abort %s)", ErrNotRelockable, id)
	}
	return fmt.Errorf("%w: --input %q names no locked input (guidance:PATH, skill:NAME, profile, harness; see the blocker's input in `rein run status %s`)", ErrUsage, input, id)
}

// RelockResult is what [Relock] did.
type RelockResult struct {
	LockAmendment
	// Notes say what the relock did not change (e.g. the profile still naming the old
	// guidance digest, so a new run would block in Preflight).
	Notes []string
}

// Relock adopts drifted input into run id's lock, a decision recorded with its approver: an
// immutable amendment artifact holds the lock in force from now on and a lock.amended record
// references it. Every artifact made from a changed input, and everything downstream of it,
// is marked stale through the staleness graph, with the gate approvals that no longer hold;
// the run goes back to the earliest such stage, so exactly the affected stages re-run. A
// profile relock needs the edited profile approved. The drift blockers the relock resolves
// are lifted; a *BlockedError after a successful relock names blockers that still hold.
func Relock(env Env, id, input, approver string) (RelockResult, error) {
	var res RelockResult
	if strings.TrimSpace(approver) == "" {
		return res, fmt.Errorf("%w: a relock is a person's decision: it needs an approver (--approver NAME)", ErrUsage)
	}
	if err := relockable(id, input); err != nil {
		return res, err
	}
	// Decide on a read-only view first, so that a refused relock writes nothing anywhere.
	r, l, err := openRunMode(env.Home, id, true)
	if err != nil {
		return res, err
	}
	_, _, err = r.relockPlan(env, input, approver)
	l.Close()
	if err != nil {
		return res, err
	}
	r, l, err = env.openRun(id)
	if err != nil {
		return res, err
	}
	defer l.Close()
	plan, next, err := r.relockPlan(env, input, approver)
	if err != nil {
		return res, err
	}
	a := plan.LockAmendment
	if a.Artifact, err = r.writeAmendment(env, a, next); err != nil {
		return res, err
	}
	if _, err := l.Append(ledger.Entry{Kind: KindLockAmended, Body: a}); err != nil {
		return res, err
	}
	r.restartAt(a)
	res = RelockResult{LockAmendment: a, Notes: plan.Notes}
	return res, r.reconcileAndRecord(env, l)
}

// relockPlan decides a relock of input by approver on the run as it stands: the amendment
// (without its artifact) and the lock it puts in force, or why it is refused.
func (r *Run) relockPlan(env Env, input, approver string) (RelockResult, Lock, error) {
	var res RelockResult
	if err := r.canRelock(); err != nil {
		return res, Lock{}, err
	}
	current := r.Reconcile(env)
	if i := slices.IndexFunc(current, func(b Blocker) bool { return b.Code == BlockLockTampered }); i >= 0 {
		return res, Lock{}, &BlockedError{RunID: r.ID, Blockers: []Blocker{current[i]}}
	}
	if _, ok := lockInputs(*r.Lock)[input]; !ok {
		return res, Lock{}, fmt.Errorf("%w: run %s's lock has no input %s (see the locked inputs in `rein run status %s`)", ErrUsage, r.ID, input, r.ID)
	}
	if !slices.ContainsFunc(current, func(b Blocker) bool { return b.Input == input }) {
		return res, Lock{}, fmt.Errorf("%w: %s matches run %s's lock; a relock adopts only a drifted input (see the blockers in `rein run status %s`)", ErrNotDrifted, input, r.ID, r.ID)
	}
	old := *r.Lock
	next, from, to, notes, err := r.relocked(env, input)
	if err != nil {
		return res, Lock{}, err
	}
	a := LockAmendment{N: len(r.Relock.Amendments) + 1, Input: input, OldDigest: from, NewDigest: to, Approver: approver,
		At: env.now().Truncate(time.Second), Changed: changedInputs(old, next)}
	if a.Stale, a.Gates, a.RestartStage, err = r.invalidated(old, next); err != nil {
		return res, Lock{}, err
	}
	return RelockResult{LockAmendment: a, Notes: notes}, next, nil
}

// canRelock refuses a run that is finished, has not passed Preflight, or holds an attempt a
// crash interrupted (its outcome must be settled under the lock it ran with).
func (r *Run) canRelock() error {
	if r.Aborted {
		return fmt.Errorf("%w: run %s was aborted", ErrFinished, r.ID)
	}
	if r.Stage == StagePreflight {
		return fmt.Errorf("%w: run %s never passed Preflight; start a new run on the current inputs", ErrNotRelockable, r.ID)
	}
	if stages := slices.Sorted(maps.Keys(r.Unsettled)); len(stages) > 0 {
		return fmt.Errorf("%w: run %s's %s attempt %d was interrupted and must be settled under the lock it ran with: restore the drifted input, run `rein run resume %s`, then change the input again and relock", ErrNotRelockable, r.ID, stages[0], r.Unsettled[stages[0]], r.ID)
	}
	if stages := slices.Sorted(maps.Keys(r.Uncompleted)); len(stages) > 0 {
		return fmt.Errorf("%w: run %s's %s attempt %d was accepted but not completed: restore the drifted input, run `rein run resume %s`, then change the input again and relock", ErrNotRelockable, r.ID, stages[0], r.Uncompleted[stages[0]], r.ID)
	}
	return nil
}

// relocked returns the lock with input adopted as it is now, the input's digest before and
// after, and notes on what the relock leaves as it is.
func (r *Run) relocked(env Env, input string) (Lock, artifact.Digest, artifact.Digest, []string, error) {
	lock := cloneLock(*r.Lock)
	switch {
	case strings.HasPrefix(input, "guidance:"):
		p := strings.TrimPrefix(input, "guidance:")
		i := slices.IndexFunc(lock.Guidance, func(g Guidance) bool { return g.Path == p })
		d, err := FileDigest(filepath.Join(r.Project, filepath.FromSlash(p)))
		if i < 0 || err != nil {
			return lock, "", "", nil, fmt.Errorf("%w: guidance file %s is missing or unreadable, and a missing file cannot be locked: restore it, or drop it from the profile, approve the profile and relock it (rein run relock %s --input profile)", ErrNotRelockable, p, r.ID)
		}
		from := artifact.Digest(lock.Guidance[i].Digest)
		lock.Guidance[i].Digest = string(d)
		var notes []string
		if lp, err := LoadProfile(r.Project); err == nil && slices.ContainsFunc(lp.Guidance, func(g Guidance) bool { return g.Path == p && g.Digest != string(d) }) {
			notes = append(notes, fmt.Sprintf("%s still names another digest for %s: a new run blocks in Preflight until the profile names %s and is approved again", ProfilePath, p, d))
		}
		return lock, from, d, notes, nil
	case strings.HasPrefix(input, "skill:"):
		name := strings.TrimPrefix(input, "skill:")
		i := slices.IndexFunc(lock.Skills, func(s LockedSkill) bool { return s.Name == name })
		if i < 0 {
			return lock, "", "", nil, fmt.Errorf("%w: the lock pins no skill %s", ErrUsage, name)
		}
		d, err := SkillTreeDigest(filepath.Join(r.Project, filepath.FromSlash(lock.Skills[i].Path)))
		if err != nil {
			return lock, "", "", nil, fmt.Errorf("%w: pinned skill %s at %s: %w; restore it", ErrNotRelockable, name, lock.Skills[i].Path, err)
		}
		from := lock.Skills[i].TreeDigest
		lock.Skills[i].TreeDigest = d
		return lock, from, d, []string{fmt.Sprintf("the skill keeps its revision label %s; the relock binds this run to tree digest %s", lock.Skills[i].Revision, d)}, nil
	case input == InputProfile:
		return r.relockProfile(env, lock)
	default: // InputHarness
		return r.relockHarness(env, lock)
	}
}

// relockProfile adopts the approved current profile: its digest and everything the lock takes
// from it (guidance, verification, skills with their tree digests, model policies). The new
// profile must be approved, accept the running harness (as at start), and reconcile cleanly:
// its guidance digests those of the files, its skills readable, its required commands
// resolvable.
func (r *Run) relockProfile(env Env, lock Lock) (Lock, artifact.Digest, artifact.Digest, []string, error) {
	lp, err := RequireApproved(r.Project)
	if err != nil {
		return lock, "", "", nil, fmt.Errorf("a profile relock adopts only an approved profile: review %s and run `rein profile approve`, then relock: %w", ProfilePath, err)
	}
	if err := harnessCompatible(lp.Harness, env.Harness); err != nil {
		return lock, "", "", nil, fmt.Errorf("%w: the edited profile does not accept this harness: %w", ErrNotRelockable, err)
	}
	from := lock.ProfileDigest
	lock.ProfileDigest, lock.Guidance, lock.Verification, lock.Models = lp.Digest, lp.Guidance, lp.Verification, lp.Models
	lock.Skills = nil
	var probs []string
	for _, s := range lp.Skills {
		d, err := SkillTreeDigest(filepath.Join(r.Project, filepath.FromSlash(s.Path)))
		if err != nil {
			probs = append(probs, fmt.Sprintf("pinned skill %s at %s: %v", s.Name, s.Path, err))
		}
		lock.Skills = append(lock.Skills, LockedSkill{Skill: s, TreeDigest: d})
	}
	for _, g := range lock.Guidance {
		if d, err := FileDigest(filepath.Join(r.Project, filepath.FromSlash(g.Path))); err != nil || string(d) != g.Digest {
			probs = append(probs, fmt.Sprintf("guidance %s: the profile names %s, the file has %s", g.Path, g.Digest, orDash(string(d))))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(lock.Verification)) {
		if v := lock.Verification[id]; v.Required {
			if err := lookCommand(r.Project, v.Argv[0]); err != nil {
				probs = append(probs, fmt.Sprintf("required verification command %s (%s) does not resolve: %v", id, v.Argv[0], err))
			}
		}
	}
	if len(probs) > 0 {
		return lock, "", "", nil, fmt.Errorf("%w: the approved profile would not reconcile: %s; fix the profile (or the files), approve it and relock again", ErrNotRelockable, strings.Join(probs, "; "))
	}
	return lock, from, lp.Digest, nil, nil
}

// relockHarness adopts the running harness. It must run the locked workflow (a workflow is
// never relocked), and the locked profile — unchanged on disk, since its harness requirement
// decides — must accept it.
func (r *Run) relockHarness(env Env, lock Lock) (Lock, artifact.Digest, artifact.Digest, []string, error) {
	if d := env.Workflow.Digest(); d != lock.Workflow.Digest {
		return lock, "", "", nil, fmt.Errorf("%w: this harness runs workflow %s, the run is locked to %s, and a workflow is never relocked: continue with the locked binary (%s, version %s), or abort the run (rein run abort %s)", ErrNotRelockable, d, lock.Workflow.Digest, lock.Harness.BinaryDigest, lock.Harness.Version, r.ID)
	}
	lp, err := LoadProfile(r.Project)
	if err != nil || lp.Digest != lock.ProfileDigest {
		return lock, "", "", nil, fmt.Errorf("%w: %s has drifted too, and the locked profile's harness requirement decides whether this harness may be locked: restore or relock the profile first", ErrNotRelockable, ProfilePath)
	}
	if problem := profileHarnessProblem(lp, env); problem != "" {
		return lock, "", "", nil, fmt.Errorf("%w: %s: change harness in %s to accept this one, approve it (`rein profile approve`) and relock the profile (`rein run relock %s --input profile`) first", ErrNotRelockable, problem, ProfilePath, r.ID)
	}
	from := lock.Harness.BinaryDigest
	lock.Harness = env.Harness
	return lock, artifact.Digest(from), artifact.Digest(env.Harness.BinaryDigest), nil, nil
}

// profileHarnessProblem says how lp's harness requirement refuses the running harness ("" when
// it accepts it).
func profileHarnessProblem(lp *LoadedProfile, env Env) string {
	switch h := lp.Harness; {
	case h.Version != "" && h.Version != env.Harness.Version:
		return fmt.Sprintf("the locked profile requires harness version %s; this is %s", h.Version, env.Harness.Version)
	case h.BinaryDigest != "" && h.BinaryDigest != env.Harness.BinaryDigest:
		return fmt.Sprintf("the locked profile requires harness binary %s; this one is %s", h.BinaryDigest, env.Harness.BinaryDigest)
	}
	return ""
}

// writeAmendment writes amendment a with the lock next as the immutable
// execution-lock-amendment-<n>.md (execution-lock-amendment-<n>.<k>.md beside a leftover).
func (r *Run) writeAmendment(env Env, a LockAmendment, next Lock) (artifact.Reference, error) {
	amends, _ := r.ref(ArtLock)
	if n := len(r.Relock.Amendments); n > 0 {
		amends = r.Relock.Amendments[n-1].Artifact
	}
	c := amendmentContent{Amends: amends.Digest, Input: a.Input, OldDigest: a.OldDigest, NewDigest: a.NewDigest, Approver: a.Approver,
		At: a.At, Changed: a.Changed, Stale: a.Stale, Gates: a.Gates, RestartStage: a.RestartStage, Lock: next}
	rel := fmt.Sprintf("%s/%s/%s-%d.md", RunsDir, r.ID, ArtLockAmendment, a.N)
	// A file left by a relock that crashed before its lock.amended record was never in force;
	// it stays as evidence, and this amendment goes beside it.
	for k := 2; ; k++ {
		if _, err := os.Lstat(filepath.Join(r.Project, filepath.FromSlash(rel))); errors.Is(err, os.ErrNotExist) {
			break
		}
		rel = fmt.Sprintf("%s/%s/%s-%d.%d.md", RunsDir, r.ID, ArtLockAmendment, a.N, k)
	}
	data := renderStageArtifact(r.ID, ArtLockAmendment, "Execution Lock Amendment", r.Stage, a.N, env.now(), c)
	ref, err := artifact.NewReference(ArtLockAmendment, rel, data)
	if err != nil {
		return ref, fmt.Errorf("%w: amendment: %w", ErrUsage, err)
	}
	return ref, writeImmutable(filepath.Join(r.Project, filepath.FromSlash(rel)), data)
}

func cloneLock(l Lock) Lock {
	data, err := json.Marshal(l)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	var c Lock
	if err := json.Unmarshal(data, &c); err != nil {
		panic(err)
	}
	return c
}

// lockInputs names every locked input with a digest of its locked value: profile,
// guidance:PATH, skill:NAME, models.ROLE, verification, harness, workflow.
func lockInputs(l Lock) map[string]artifact.Digest {
	sum := func(v any) artifact.Digest {
		data, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return artifact.Sum(data)
	}
	in := map[string]artifact.Digest{InputProfile: l.ProfileDigest, "verification": sum(l.Verification),
		InputHarness: sum(l.Harness), InputWorkflow: l.Workflow.Digest}
	for _, g := range l.Guidance {
		in["guidance:"+g.Path] = artifact.Digest(g.Digest)
	}
	for _, s := range l.Skills {
		in["skill:"+s.Name] = sum(s)
	}
	for role, m := range l.Models {
		in["models."+role] = sum(m)
	}
	return in
}

// changedInputs lists the locked inputs whose value differs between two locks, sorted.
func changedInputs(old, next Lock) []string {
	a, b := lockInputs(old), lockInputs(next)
	var out []string
	for k := range maps.Keys(a) {
		if b[k] != a[k] {
			out = append(out, k)
		}
	}
	for k := range maps.Keys(b) {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// consumes reports whether stage reads locked input when it runs: guidance files enter every
// workflow-role model stage (their packs), a pinned skill the stages it is mapped to in any of
// locks (the lock before and after a relock), a role's model
// policy the stages of that role, the verification commands the ticket stages that run them,
// and the harness every model stage (its prompts, tools and contracts are harness code).
// Preflight's checks are facts of the run's start and never re-run; the profile's digest alone
// feeds no stage.
func consumes(stage, input string, locks ...Lock) bool {
	var s WorkflowStage
	for _, w := range DeliveryWorkflow().Stages {
		if w.ID == stage {
			s = w
		}
	}
	switch {
	case strings.HasPrefix(input, "guidance:"):
		return s.Kind == KindModel && s.Role == RoleWorkflow
	case strings.HasPrefix(input, "skill:"):
		// A skill enters only the requests of the stages it is mapped to, under either lock.
		for _, l := range locks {
			for _, sk := range l.Skills {
				if "skill:"+sk.Name == input && slices.Contains(sk.Stages, stage) {
					return true
				}
			}
		}
		return false
	case strings.HasPrefix(input, "models."):
		return s.Kind == KindModel && s.Role == strings.TrimPrefix(input, "models.")
	case input == "verification":
		return slices.Contains([]string{"ticket-execution", "ticket-verification", "full-run-verification"}, stage)
	case input == InputHarness:
		return s.Kind == KindModel
	}
	return false
}

// nodeStage is the stage that makes the artifact graph's node.
func nodeStage(node string) string {
	switch node {
	case ArtSnapshot:
		return "start"
	case ArtResearch:
		return StageResearch
	case ArtClarification:
		return StageClarification
	case ArtSpec:
		return StageSpecification
	case ArtTicketPlan:
		return StageTicketPlanning
	}
	return ""
}

// absent stands for a locked input a stage's artifact was made without: artifact.Sum of
// "absent", written out (TestAbsentIsTheSumOfAbsent), so that no digest is computed at load.
const absent = artifact.Digest(artifact.DigestPrefix + "5ad38304b535c2987dbd24657c1a11b884984ff600d9f389deb0d4e634fee792")

// invalidated marks what a change from lock old to next invalidates, through the run's
// artifact graph: each node gains the locked inputs its stage reads, with their digests in old
// (every node in the graph was made under old: an earlier relock sent the run back before any
// stage that read what it changed), and is checked against next's digests with every artifact
// at its recorded digest, so only the relock's effect counts. It returns the stale artifacts,
// the gate approvals that no longer hold, and the earliest stage of a stale artifact.
func (r *Run) invalidated(old, next Lock) (stale, gates []string, restart string, err error) {
	g := r.graph()
	before, after := lockInputs(old), lockInputs(next)
	names := slices.Sorted(maps.Keys(before))
	for k := range after {
		if _, ok := before[k]; !ok {
			names = append(names, k)
		}
	}
	current := maps.Clone(after)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		current[n.ID] = n.Digest
		for _, in := range names {
			if !consumes(nodeStage(n.ID), in, old, next) {
				continue
			}
			d, ok := before[in]
			if !ok {
				d = absent
			}
			n.Inputs = append(n.Inputs, artifact.Input{ID: in, Digest: d})
		}
	}
	rep, err := g.Check(current)
	if err != nil {
		return nil, nil, "", err
	}
	stale, gates = []string{}, []string{}
	for _, s := range rep.Stale {
		stale = append(stale, s.ID)
		if st := nodeStage(s.ID); restart == "" || stageIndex(st) < stageIndex(restart) {
			restart = st
		}
	}
	for _, a := range rep.Invalid() {
		gates = append(gates, a.ID)
	}
	// Report in workflow order.
	slices.SortFunc(stale, func(a, b string) int { return stageIndex(nodeStage(a)) - stageIndex(nodeStage(b)) })
	return stale, gates, restart, nil
}

// relockRecovery is the relock option of a drift blocker about input ("" for an input that is
// never relocked).
func (r *Run) relockRecovery(env Env, input string) string {
	cmd := fmt.Sprintf("`rein run relock %s --input %s --approver WHO`", r.ID, input)
	const effect = "; the stages that read what changed re-run, and their artifacts and gate approvals are marked stale"
	switch {
	case strings.HasPrefix(input, "guidance:"), strings.HasPrefix(input, "skill:"):
		return "relock " + input + " to its current content with a recorded approval: " + cmd + effect
	case input == InputProfile:
		return "approve the edited profile (`rein profile approve`), then relock it with a recorded approval: " + cmd + effect
	case strings.HasPrefix(input, "models."):
		return input + " is part of the profile: approve the edited profile (`rein profile approve`), then relock the profile with a recorded approval: " +
			fmt.Sprintf("`rein run relock %s --input profile --approver WHO`", r.ID) + effect
	case input == InputHarness:
		first := ""
		if lp, err := LoadProfile(r.Project); err == nil && lp.Digest == r.Lock.ProfileDigest {
			if problem := profileHarnessProblem(lp, env); problem != "" {
				first = fmt.Sprintf("%s, so first change harness in %s to accept this one, approve it (`rein profile approve`) and relock the profile (`rein run relock %s --input profile --approver WHO`, with this binary); then ", problem, ProfilePath, r.ID)
			}
		}
		return fmt.Sprintf("relock the run to this harness (version %s, binary %s) with a recorded approval: %srun %s with this binary; every model stage the run has passed re-runs, and their artifacts and gate approvals are marked stale",
			env.Harness.Version, env.Harness.BinaryDigest, first, cmd)
	}
	return ""
}

// withRelock adds the relock option to each drift blocker that has one, before its last
// option (abort). A run that has not passed Preflight offers none (its recovery is a new run).
func (r *Run) withRelock(env Env, bs []Blocker) []Blocker {
	if r.Stage == StagePreflight {
		return bs
	}
	for i, b := range bs {
		opt := r.relockRecovery(env, b.Input)
		if opt == "" || len(b.Recovery) == 0 {
			continue
		}
		last := len(b.Recovery) - 1
		bs[i].Recovery = append(slices.Clone(b.Recovery[:last]), opt, b.Recovery[last])
	}
	return bs
}

// relockEvidence adds to lift evidence the amendment that relocked input, if one did.
func (r *Run) relockEvidence(input string) string {
	for i := len(r.Relock.Amendments) - 1; i >= 0; i-- {
		a := r.Relock.Amendments[i]
		if a.Input == input || slices.Contains(a.Changed, input) {
			return fmt.Sprintf(" (relocked by %s, approved by %s)", a.Artifact.Path, a.Approver)
		}
	}
	return ""
}

// invalidatedBy names the latest relock that invalidated gate's approval ("" when none did).
func (r *Run) invalidatedBy(gate string) string {
	for i := len(r.Relock.Amendments) - 1; i >= 0; i-- {
		if a := r.Relock.Amendments[i]; slices.Contains(a.Gates, gate) {
			return fmt.Sprintf(" (relock %d of %s invalidated it)", a.N, a.Input)
		}
	}
	return ""
}

// WriteRelocks writes the relocks of a status report for a terminal.
func WriteRelocks(w io.Writer, as []LockAmendment) {
	for _, a := range as {
		fmt.Fprintf(w, "relock %d: %s %s -> %s by %s at %s (%s digest %s)\n", a.N, a.Input, orDash(string(a.OldDigest)), a.NewDigest, a.Approver,
			a.At.UTC().Format(time.RFC3339), a.Artifact.Path, a.Artifact.Digest)
		if len(a.Changed) > 0 {
			fmt.Fprintf(w, "  changed: %s\n", strings.Join(a.Changed, ", "))
		}
		if a.RestartStage == "" {
			fmt.Fprintf(w, "  invalidated nothing: no stage had used what changed\n")
			continue
		}
		fmt.Fprintf(w, "  invalidated (made from what changed): %s", strings.Join(a.Stale, ", "))
		if len(a.Gates) > 0 {
			fmt.Fprintf(w, "; gate approvals: %s", strings.Join(a.Gates, ", "))
		}
		fmt.Fprintf(w, "\n  re-run from: %s\n", a.RestartStage)
	}
}
