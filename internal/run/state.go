package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// HistoryNote is what status says about session history.
const HistoryNote = "session history is not used: this state is rebuilt from the run ledger and the locked artifacts"

// Run is a run's state as rebuilt from its ledger.
type Run struct {
	ID       string
	Project  string
	Started  Started
	Stage    string
	Attempts map[string]int
	Blockers []Blocker
	Gaps     []Gap
	Aborted  bool
	Lock     *Lock
	Snapshot *Snapshot
	// Preflight is the Preflight artifact as the ledger recorded it.
	Preflight *artifact.Reference
	// StageAttempts are the settled model-stage attempts, per stage, in order.
	StageAttempts map[string][]Attempt
	// Completed holds the stages completed, in order.
	Completed []string
	// RoundStart is, per model stage, the attempt count when a gate last sent it back: the
	// attempt cap counts the attempts after it.
	RoundStart map[string]int
	// Clarification is the answers artifact recorded by `rein run clarify`, if any.
	Clarification *artifact.Reference
	// Gates holds each gate's decisions, in order.
	Gates map[string][]GateDecision
	// Unsettled is, per stage, the attempt started without its stage.attempt record (a
	// crash interrupted it); Uncompleted, the accepted attempt (for a gate stage: the number
	// of its recorded approval) without its stage.completed.
	Unsettled, Uncompleted map[string]int
	// Relock holds the relocks recorded (see relock.go).
	Relock relockState
	// Accepted is each ticket's ticket.accepted record (the latest), by ticket id.
	Accepted map[string]TicketAccepted
	// Delivery is what the stages after the tickets recorded (see checkstage.go).
	Delivery deliveryState
	// Tickets holds the ticket stages' state (see ticket.go).
	Tickets ticketState
	// Sandbox is the run's recorded sandbox decision (see sandbox_run.go).
	Sandbox SandboxDecision
}

func runDir(home, id string) string { return filepath.Join(home, "runs", id) }

// Latest returns the id of the newest run of project in home. A run of the project whose
// ledger cannot be read (corrupt, a header naming another run) is never skipped (one whose
// creation never finished is: it was never acknowledged): when it is the newest, Latest fails with what is wrong with it. A run
// belongs to the project when its header binds the project or, for a ledger whose header
// cannot be trusted, when the project holds the run's artifact directory.
func Latest(home, project string) (string, error) {
	entries, err := os.ReadDir(filepath.Join(home, "runs"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	type found struct {
		id  string
		err error
	}
	var runs []found
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() || !ledger.ValidID(id) {
			continue
		}
		if _, err := os.Stat(filepath.Join(runDir(home, id), ledger.FileName)); err != nil {
			continue
		}
		l, _, err := ledger.OpenReadOnly(runDir(home, id), ledger.Options{})
		if err == nil {
			h := l.Header()
			l.Close()
			if h.Bindings["project"] != project {
				continue
			}
			runs = append(runs, found{id: id, err: checkRunHeader(id, runDir(home, id), h)})
			continue
		}
		if errors.Is(err, ledger.ErrIncomplete) {
			continue // its start never finished: no run was acknowledged
		}
		if fi, serr := os.Stat(filepath.Join(project, filepath.FromSlash(RunsDir), id)); serr == nil && fi.IsDir() {
			runs = append(runs, found{id: id, err: runLedgerError(id, runDir(home, id), err)})
		}
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("%w: no run of %s (start one with `rein run start --requirement FILE`)", ErrNoRun, project)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].id < runs[j].id })
	last := runs[len(runs)-1]
	if last.err != nil {
		return "", fmt.Errorf("the latest run of %s cannot be used: %w", project, last.err)
	}
	return last.id, nil
}

// runLedgerError names the run whose ledger in dir failed to open, with what to do.
func runLedgerError(id, dir string, err error) error {
	if errors.Is(err, ledger.ErrLocked) {
		return fmt.Errorf("run %s: %w", id, err)
	}
	return fmt.Errorf("run %s cannot be used: its run ledger in %s does not verify: %w; nothing was changed: restore the ledger from a backup, or start a new run (a corrupt run can be neither continued nor aborted)", id, dir, err)
}

// checkRunHeader refuses a ledger that is not run id's own: another run's ledger copied into
// its directory, or a ledger of another type.
func checkRunHeader(id, dir string, h ledger.Header) error {
	if h.Type != ledger.TypeRun || h.ID != id {
		return runLedgerError(id, dir, fmt.Errorf("%w: its header names the %s ledger %q, not run %s", ledger.ErrCorrupt, h.Type, h.ID, id))
	}
	return nil
}

// openRun opens a run's ledger for writing and rebuilds its state. A ledger that does not
// verify, or whose header names another run, fails naming the run and the corruption.
func openRun(home, id string) (*Run, *ledger.Ledger, error) { return openRunFS(home, id, false, nil) }

// openRun opens run id for writing, its ledger on e.RunFS (the test seam; nil: the OS).
func (e Env) openRun(id string) (*Run, *ledger.Ledger, error) {
	return openRunFS(e.Home, id, false, e.RunFS)
}

// openRunMode is openRun; readOnly opens the ledger without its lock and refuses writes (a
// torn tail is left as it is): what status reads through.
func openRunMode(home, id string, readOnly bool) (*Run, *ledger.Ledger, error) {
	return openRunFS(home, id, readOnly, nil)
}

// openRunFS is openRunMode with the run ledger on fsys (nil: the OS).
func openRunFS(home, id string, readOnly bool, fsys ledger.FS) (*Run, *ledger.Ledger, error) {
	if !ledger.ValidID(id) {
		return nil, nil, fmt.Errorf("%w: %q", ErrNoRun, id)
	}
	dir := runDir(home, id)
	if _, err := os.Stat(filepath.Join(dir, ledger.FileName)); err != nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	open := ledger.Open
	if readOnly {
		open = ledger.OpenReadOnly
	}
	l, _, err := open(dir, ledger.Options{FS: fsys})
	if err != nil {
		return nil, nil, runLedgerError(id, dir, err)
	}
	if err := checkRunHeader(id, dir, l.Header()); err != nil {
		l.Close()
		return nil, nil, err
	}
	r := &Run{ID: id, Attempts: map[string]int{}, StageAttempts: map[string][]Attempt{}, RoundStart: map[string]int{},
		Gates: map[string][]GateDecision{}, Unsettled: map[string]int{}, Uncompleted: map[string]int{}}
	for rec, err := range l.Records() {
		if err != nil {
			l.Close()
			return nil, nil, runLedgerError(id, dir, err)
		}
		if err := r.apply(rec); err != nil {
			l.Close()
			return nil, nil, runLedgerError(id, dir, fmt.Errorf("%w: record %d (%s): %w", ledger.ErrCorrupt, rec.Seq, rec.Kind, err))
		}
	}
	r.Project = r.Started.Project
	return r, l, nil
}

func (r *Run) apply(rec ledger.Record) error {
	switch rec.Kind {
	case ledger.KindHeader, ledger.KindRecovery, ledger.KindSalvage, KindLeaseTakenOver:
		return nil
	case KindStarted:
		r.Stage = StagePreflight
		return json.Unmarshal(rec.Body, &r.Started)
	case KindStageStarted:
		var b stageBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return err
		}
		r.Stage = b.Stage
		r.Attempts[b.Stage] = b.Attempt
		r.Unsettled[b.Stage] = b.Attempt
	case KindStageCompleted:
		var b stageBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return err
		}
		r.Stage = DeliveryWorkflow().Next(b.Stage)
		r.Completed = append(r.Completed, b.Stage)
		delete(r.Unsettled, b.Stage)
		delete(r.Uncompleted, b.Stage)
	case KindStageAttempt:
		var a Attempt
		if err := json.Unmarshal(rec.Body, &a); err != nil {
			return err
		}
		r.StageAttempts[a.Stage] = append(r.StageAttempts[a.Stage], a)
		if r.Unsettled[a.Stage] == a.Attempt {
			delete(r.Unsettled, a.Stage)
		}
		if a.Outcome == "accepted" {
			r.Uncompleted[a.Stage] = a.Attempt
		}
	case KindPreflight:
		var b preflightBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return err
		}
		r.Gaps = b.Gaps
		r.Preflight = &b.Artifact
	case KindBlocked:
		var b blockedBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return err
		}
		for i := range b.Blockers {
			b.Blockers[i].legacy = b.Schema < blockedSchema
		}
		r.Blockers = append(r.Blockers, b.Blockers...)
	case KindBlockerLifted:
		var b liftedBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return err
		}
		r.Blockers = slices.DeleteFunc(r.Blockers, func(o Blocker) bool { return sameBlocker(o, b.Blocker) })
	case KindAborted:
		r.Aborted = true
	case KindSandbox:
		return json.Unmarshal(rec.Body, &r.Sandbox)
	case KindLockAmended:
		return r.applyAmended(rec.Body)
	case KindCheckResult, KindIntegrated, KindIntegrationConflict, KindDeliverySummary, KindDeliveryReady:
		return r.applyDelivery(rec.Kind, rec.Body)
	case KindClarified:
		var b clarifiedBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return err
		}
		r.Clarification = &b.Artifact
	case KindGateDecision:
		var g GateDecision
		if err := json.Unmarshal(rec.Body, &g); err != nil {
			return err
		}
		r.Gates[g.Gate] = append(r.Gates[g.Gate], g)
		if st := gateFor(g.Gate).stage; g.Decision == GateApproved && st != "" && r.Stage == st {
			// An approval is followed by its gate stage's stage.completed, which clears this; a
			// crash between the two leaves it for resume (settleApproval).
			r.Uncompleted[st] = len(r.Gates[g.Gate])
		}
		if g.Decision == GateRejected {
			back := gateStage(g.Gate)
			r.Stage = back
			r.RoundStart[back] = r.Attempts[back]
		}
	default:
		if strings.HasPrefix(rec.Kind, "ticket.") {
			return r.applyTicket(rec)
		}
		if !ledger.Skippable(rec.Kind) {
			return fmt.Errorf("unknown record kind")
		}
	}
	return nil
}

func (r *Run) ref(id string) (artifact.Reference, bool) {
	for _, a := range r.Started.Artifacts {
		if a.ID == id {
			return a, true
		}
	}
	return artifact.Reference{}, false
}

// readArtifact reads a run artifact and checks it against the reference in the ledger.
func (r *Run) readArtifact(id string) ([]byte, error) {
	ref, ok := r.ref(id)
	if !ok {
		return nil, fmt.Errorf("the ledger names no %s artifact", id)
	}
	data, err := os.ReadFile(resolve(r.Project, ref.Path))
	if err != nil {
		return nil, err
	}
	if d := artifact.Sum(data); d != ref.FileDigest {
		return nil, fmt.Errorf("%s has file digest %s, the ledger recorded %s", ref.Path, d, ref.FileDigest)
	}
	return data, nil
}

// Reconcile compares every locked input with its current state and returns a blocker for each
// difference.
func (r *Run) Reconcile(env Env) []Blocker {
	var bs []Blocker
	block := func(code, input, detail string, recovery ...string) {
		recovery = append(recovery, "abort the run (rein run abort "+r.ID+") and start a new one on the current inputs")
		bs = append(bs, Blocker{Code: code, Stage: r.Stage, Input: input, Detail: detail, Recovery: recovery})
	}
	lockData, err := r.readArtifact(ArtLock)
	var lock Lock
	if err == nil {
		err = decodeArtifact(lockData, &lock)
	}
	if err == nil {
		lock, err = r.effectiveLock(lock)
	}
	if err != nil {
		block(BlockLockTampered, InputLock, "execution lock: "+err.Error(), "restore the run's execution-lock.md (and its execution-lock-amendment-<n>.md) from version control or backup")
		return bs
	}
	r.Lock = &lock
	var snap Snapshot
	snapData, err := r.readArtifact(ArtSnapshot)
	if err == nil {
		err = decodeArtifact(snapData, &snap)
	}
	if err == nil {
		_, err = r.readArtifact(ArtRequirement)
	}
	if err != nil {
		block(BlockRequirementDrift, InputRequirement, "requirement snapshot: "+err.Error(), "restore the run's requirement artifacts")
	} else {
		r.Snapshot = &snap
		if d, err := FileDigest(resolve(r.Project, snap.Path)); err != nil {
			block(BlockRequirementDrift, InputRequirement, "requirement source "+snap.Path+" is missing or unreadable", "restore "+snap.Path+" (content digest "+string(snap.ContentDigest)+")")
		} else if d != snap.ContentDigest {
			block(BlockRequirementDrift, InputRequirement, fmt.Sprintf("requirement source %s has digest %s; the snapshot has %s", snap.Path, d, snap.ContentDigest),
				"restore "+snap.Path+" to the snapshot's content")
		}
	}
	if env.Harness != lock.Harness {
		block(BlockHarnessDrift, InputHarness, fmt.Sprintf("harness upgrade: this rein is version %s binary %s; the run is locked to version %s binary %s",
			env.Harness.Version, env.Harness.BinaryDigest, lock.Harness.Version, lock.Harness.BinaryDigest),
			"continue with the locked binary: run `rein run next "+r.ID+"` with the rein binary whose digest is "+lock.Harness.BinaryDigest+
				" (version "+lock.Harness.Version+"); the blocker lifts when that binary reconciles the run")
	}
	if d := env.Workflow.Digest(); d != lock.Workflow.Digest {
		block(BlockWorkflowDrift, InputWorkflow, fmt.Sprintf("this harness runs workflow %s v%d (%s); the run is locked to %s v%d (%s)",
			env.Workflow.ID, env.Workflow.Version, d, lock.Workflow.ID, lock.Workflow.Version, lock.Workflow.Digest),
			"continue with a harness whose workflow digest is "+string(lock.Workflow.Digest))
	}
	profData, err := os.ReadFile(filepath.Join(r.Project, ProfilePath))
	if err != nil {
		block(BlockProfileDrift, InputProfile, ProfilePath+" is missing or unreadable", "restore "+ProfilePath+" (digest "+string(lock.ProfileDigest)+")")
	} else if d := artifact.Sum(profData); d != lock.ProfileDigest {
		block(BlockProfileDrift, InputProfile, fmt.Sprintf("%s has digest %s; the run is locked to %s", ProfilePath, d, lock.ProfileDigest),
			"restore "+ProfilePath+" to the locked content (digest "+string(lock.ProfileDigest)+")")
		var cur Profile
		if p, err := ParseProfile(profData); err == nil {
			cur = *p
		}
		for _, role := range Roles {
			a, _ := json.Marshal(cur.Models[role])
			b, _ := json.Marshal(lock.Models[role])
			if string(a) != string(b) {
				block(BlockModelPolicyDrift, "models."+role, fmt.Sprintf("the %s role's model policy (%s/%s) differs from the locked one (%s/%s, budget %d turns, %d tokens, %s)",
					role, cur.Models[role].Provider, cur.Models[role].Model, lock.Models[role].Provider, lock.Models[role].Model,
					lock.Models[role].Budget.ModelTurns, lock.Models[role].Budget.Tokens, lock.Models[role].Budget.Elapsed),
					"restore models."+role+" in "+ProfilePath)
			}
		}
	}
	for _, g := range lock.Guidance {
		d, err := FileDigest(filepath.Join(r.Project, filepath.FromSlash(g.Path)))
		if err != nil {
			bs = append(bs, withAbort(guidanceBlocker(r.Stage, g, "is missing or unreadable"), r.ID))
		} else if string(d) != g.Digest {
			bs = append(bs, withAbort(guidanceBlocker(r.Stage, g, "has digest "+string(d)), r.ID))
		}
	}
	for _, s := range lock.Skills {
		if d, err := SkillTreeDigest(filepath.Join(r.Project, filepath.FromSlash(s.Path))); err != nil || d != s.TreeDigest {
			bs = append(bs, r.skillDriftBlocker(s, d, err))
		}
	}
	return r.withRelock(env, bs)
}

// skillDriftBlocker is run_skill_drift for locked skill s, whose tree has digest d now (or
// cannot be read: err), without the relock option (withRelock adds it).
func (r *Run) skillDriftBlocker(s LockedSkill, d artifact.Digest, err error) Blocker {
	detail, restore := fmt.Sprintf("pinned skill %s@%s at %s has tree digest %s; the run is locked to %s", s.Name, s.Revision, s.Path, d, s.TreeDigest), "restore "+s.Path+" to revision "+s.Revision
	if err != nil {
		detail, restore = fmt.Sprintf("pinned skill %s@%s at %s: %v", s.Name, s.Revision, s.Path, err), "restore "+s.Path
	}
	return Blocker{Code: BlockSkillDrift, Stage: r.Stage, Input: "skill:" + s.Name, Detail: detail,
		Recovery: []string{restore, "abort the run (rein run abort " + r.ID + ") and start a new one on the current inputs"}}
}

func withAbort(b Blocker, id string) Blocker {
	b.Recovery = append(b.Recovery, "abort the run (rein run abort "+id+") and start a new one on the current inputs")
	return b
}

// Abort records that the run was aborted.
func Abort(env Env, id, reason string) error {
	r, l, err := env.openRun(id)
	if err != nil {
		return err
	}
	defer l.Close()
	if r.Aborted {
		return fmt.Errorf("%w: run %s was already aborted", ErrFinished, id)
	}
	_, err = l.Append(ledger.Entry{Kind: KindAborted, Body: abortedBody{Reason: reason}})
	return err
}
