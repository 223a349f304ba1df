package run

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/sandbox"
)

// SchemaVersion is the version of the run's artifacts and ledger records written here.
const SchemaVersion = 1

// Artifact ids and file names under .rein/runs/<run-id>/.
const (
	ArtRequirement = "requirement"
	ArtSnapshot    = "requirement-snapshot"
	ArtLock        = "execution-lock"
	ArtPreflight   = "preflight"
)

// Ledger record kinds.
const (
	KindStarted        = "run.started"
	KindStageStarted   = "stage.started"
	KindStageCompleted = "stage.completed"
	KindPreflight      = "preflight.result"
	KindBlocked        = "run.blocked"
	KindAborted        = "run.aborted"
)

// Env is what a run takes from the outside world.
type Env struct {
	Home     string           // $REIN_HOME; run ledgers live in Home/runs/<run-id>
	Harness  Harness          // the running harness: version and sha256 of its binary
	Workflow Workflow         // the workflow this harness runs
	Now      func() time.Time // nil: time.Now
	// Agents builds the agent of every stage attempt: rein's composition root (package
	// system) implements it, so a stage gets the same model wrapping, tool surface, gate,
	// hooks, telemetry and session lifecycle as any run.
	Agents Agents
	// Parallel is `rein run next --parallel N`: at most N independent tickets at a time
	// (0 means 1).
	Parallel int
	// Sandbox, when set, builds the OS sandbox every approved command of the run runs in (the
	// writer's run_command, the candidate's checks, Ticket and Full Run Verification), given
	// the directory it runs in; nil runs them unsandboxed. A sandbox that cannot be built stops
	// the command: none runs unsandboxed instead. `rein run next|resume --sandbox` (or the
	// global settings' "sandbox") sets it (system.CommandSandboxes).
	Sandbox func(workspace string) (*sandbox.Sandbox, error)
	// SandboxBy says what asked for Sandbox ("--sandbox" when empty, or "settings"): what
	// the run's sandbox decision records (KindSandbox) the first time.
	SandboxBy string
	// NewSandbox builds Sandbox for a run that recorded the sandbox decision when Sandbox is
	// nil (an invocation without --sandbox): the decision holds for every later invocation,
	// and a run that recorded it stops when NewSandbox is nil or fails (system.CommandSandboxes
	// with requested true).
	NewSandbox func() (func(workspace string) (*sandbox.Sandbox, error), error)
	// Test seams: Crash is called at named points of the run's steps (see crash); SessionFS is
	// the stage sessions' ledger filesystem, RunFS the run ledger's for the commands that write
	// it (next, resume, the gate decisions, abort, relock; nil: the OS).
	Crash     func(point string)
	SessionFS ledger.FS
	RunFS     ledger.FS
}

// Agents builds agents for roles; run declares what it needs and imports no tool, provider
// or model package.
type Agents interface {
	Agent(ctx context.Context, spec agentspec.Spec) (agentspec.Agent, error)
}

// crash calls the Crash seam at a named point: preflight-lock, preflight-started, session
// (before a stage session is created), artifact (after an accepted artifact is written),
// attempt (after the stage.attempt record), clarification, rejection, approval (after a gate
// approval's gate.decision record, before its stage.completed).
func (e Env) crash(point string) {
	if e.Crash != nil {
		e.Crash(point)
	}
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

// Snapshot is the digest-bound content of the Requirement Snapshot.
type Snapshot struct {
	Source        string          `json:"source"`  // "file"
	Path          string          `json:"path"`    // project-relative, or absolute when outside
	Version       string          `json:"version"` // git:<commit> of the project's HEAD, or "untracked"
	ContentDigest artifact.Digest `json:"contentDigest"`
	Summary       string          `json:"summary"`
	Branch        string          `json:"branch"`
}

// Lock is the digest-bound content of the Execution Lock.
type Lock struct {
	RunSchemaVersion      int                     `json:"runSchemaVersion"`
	ArtifactSchemaVersion int                     `json:"artifactSchemaVersion"`
	Harness               Harness                 `json:"harness"`
	Workflow              LockedWorkflow          `json:"workflow"`
	ProfileDigest         artifact.Digest         `json:"profileDigest"`
	Guidance              []Guidance              `json:"guidance"`
	Skills                []LockedSkill           `json:"skills"`
	Models                map[string]ModelPolicy  `json:"models"`
	Verification          map[string]Verification `json:"verification"`
	SnapshotDigest        artifact.Digest         `json:"snapshotDigest"`
}

// LockedWorkflow names the workflow definition a run follows.
type LockedWorkflow struct {
	ID      string          `json:"id"`
	Version int             `json:"version"`
	Digest  artifact.Digest `json:"digest"`
}

// LockedSkill is a pinned skill with its directory-tree digest.
type LockedSkill struct {
	Skill
	TreeDigest artifact.Digest `json:"treeDigest"`
}

// Started is the body of the run.started record.
type Started struct {
	Project   string               `json:"project"`
	Artifacts []artifact.Reference `json:"artifacts"`
}

// StartOptions says what to start.
type StartOptions struct {
	Project     string // the project root
	Requirement string // the requirement file
	Branch      string // the delivery branch; "" for rein/<run-id>
}

// Start starts a run: profile check, snapshot, lock, ledger, reconciliation, Preflight,
// reconciliation. It returns the run id with a *BlockedError when the run was created but
// stopped.
func Start(env Env, o StartOptions) (string, error) {
	lp, err := RequireApproved(o.Project)
	if err != nil {
		return "", err
	}
	if err := harnessCompatible(lp.Harness, env.Harness); err != nil {
		return "", err
	}
	req, err := os.ReadFile(o.Requirement)
	if err != nil {
		return "", fmt.Errorf("%w: requirement: %w", ErrUsage, err)
	}
	if len(bytes.TrimSpace(req)) == 0 {
		return "", fmt.Errorf("%w: requirement %s is empty", ErrUsage, o.Requirement)
	}
	now := env.now()
	id := newRunID(now)
	if o.Branch == "" {
		o.Branch = "rein/" + id
	}
	repo := gitx.Runner{Dir: o.Project}
	if _, err := repo.Run(context.Background(), "check-ref-format", "--branch", o.Branch); err != nil && repo.IsRepo(context.Background()) {
		return "", fmt.Errorf("%w: --branch %q is not a valid branch name", ErrUsage, o.Branch)
	}
	reqPath, err := projectPath(o.Project, o.Requirement)
	if err != nil {
		return "", err
	}
	lock := Lock{
		RunSchemaVersion: SchemaVersion, ArtifactSchemaVersion: artifact.NormalizationVersion,
		Harness:       env.Harness,
		Workflow:      LockedWorkflow{ID: env.Workflow.ID, Version: env.Workflow.Version, Digest: env.Workflow.Digest()},
		ProfileDigest: lp.Digest, Guidance: lp.Guidance, Models: lp.Models, Verification: lp.Verification,
	}
	var trees []skillTree
	for _, s := range lp.Skills {
		t, err := readSkillTree(filepath.Join(o.Project, filepath.FromSlash(s.Path)))
		if err != nil {
			return "", fmt.Errorf("%w: pinned skill %s: %w", ErrBlocked, s.Name, err)
		}
		trees = append(trees, t)
		lock.Skills = append(lock.Skills, LockedSkill{Skill: s, TreeDigest: t.Digest})
	}
	if err := checkSkillLimits(lp.Skills, trees); err != nil {
		return "", fmt.Errorf("%w: %w", ErrBlocked, err)
	}
	version := "untracked"
	if head, err := repo.Head(context.Background()); err == nil {
		version = "git:" + head
	}
	snap := Snapshot{Source: "file", Path: reqPath, Version: version, ContentDigest: artifact.Sum(req), Summary: summary(req), Branch: o.Branch}

	dir := filepath.Join(o.Project, filepath.FromSlash(RunsDir), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var refs []artifact.Reference
	put := func(name string, data []byte) (artifact.Reference, error) {
		rel := RunsDir + "/" + id + "/" + name + ".md"
		ref, err := artifact.NewReference(name, rel, data)
		if err != nil {
			return ref, fmt.Errorf("%w: %s: %w", ErrUsage, name, err)
		}
		if err := writeImmutable(filepath.Join(o.Project, filepath.FromSlash(rel)), data); err != nil {
			return ref, err
		}
		refs = append(refs, ref)
		return ref, nil
	}
	if _, err := put(ArtRequirement, req); err != nil {
		return "", err
	}
	snapRef, err := put(ArtSnapshot, renderArtifact(id, ArtSnapshot, "Requirement Snapshot", now, snap))
	if err != nil {
		return "", err
	}
	lock.SnapshotDigest = snapRef.Digest
	lockRef, err := put(ArtLock, renderArtifact(id, ArtLock, "Execution Lock", now, lock))
	if err != nil {
		return "", err
	}
	l, err := ledger.Create(filepath.Join(env.Home, "runs", id), ledger.Header{Type: ledger.TypeRun, ID: id, Bindings: map[string]string{
		"project": o.Project, "lock": string(lockRef.Digest), "snapshot": string(snapRef.Digest),
		"profile": string(lp.Digest), "workflow": string(lock.Workflow.Digest), "harnessBinary": env.Harness.BinaryDigest,
	}}, ledger.Options{Now: env.now})
	if err != nil {
		return "", err
	}
	defer l.Close()
	if _, err := l.Append(ledger.Entry{Kind: KindStarted, Body: Started{Project: o.Project, Artifacts: refs}}); err != nil {
		return id, err
	}
	env.crash("preflight-lock")
	r := &Run{ID: id, Project: o.Project, Started: Started{Project: o.Project, Artifacts: refs}, Stage: StagePreflight}
	if err := r.reconcileAndRecord(env, l); err != nil {
		return id, err
	}
	if _, err := l.Append(ledger.Entry{Kind: KindStageStarted, Body: stageBody{Stage: StagePreflight, Attempt: 1}}); err != nil {
		return id, err
	}
	env.crash("preflight-started")
	pf := Preflight(o.Project, lock, snap)
	pfRef, err := put(ArtPreflight, renderArtifact(id, ArtPreflight, "Preflight", env.now(), pf))
	if err != nil {
		return id, err
	}
	if _, err := l.Append(ledger.Entry{Kind: KindPreflight, Body: preflightBody{PreflightResult: pf, Artifact: pfRef}}); err != nil {
		return id, err
	}
	if len(pf.Blockers) > 0 {
		if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: pf.Blockers}}); err != nil {
			return id, err
		}
		return id, &BlockedError{RunID: id, Blockers: pf.Blockers}
	}
	if err := r.reconcileAndRecord(env, l); err != nil {
		return id, err
	}
	if _, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StagePreflight, Attempt: 1, Outcome: "passed"}}); err != nil {
		return id, err
	}
	return id, nil
}

// ErrUsage marks bad input to a run command.
var ErrUsage = errors.New("bad run input")

// usageError is a sentinel that matches ErrUsage ("bad run input: " + its text): a value the
// compiler lays out, where fmt.Errorf at package level would run at every start.
type usageError string

func (e usageError) Error() string { return ErrUsage.Error() + ": " + string(e) }
func (usageError) Unwrap() error   { return ErrUsage }

type stageBody struct {
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt"`
	Outcome string `json:"outcome,omitempty"`
}

type preflightBody struct {
	PreflightResult
	Artifact artifact.Reference `json:"artifact"`
}

// blockedBody is the body of a run.blocked record.
type blockedBody struct {
	Blockers []Blocker `json:"blockers"`
	// Schema is blockedSchema in every record this rein writes (MarshalJSON sets it): its
	// blockers name their ticket in Blocker.Ticket. A record without it is older: a ticket's
	// blocker named the ticket only in its detail text.
	Schema int `json:"schema,omitempty"`
}

// blockedSchema is the run.blocked body whose blockers name their ticket by a field.
const blockedSchema = 2

func (b blockedBody) MarshalJSON() ([]byte, error) {
	type plain blockedBody
	b.Schema = blockedSchema
	return json.Marshal(plain(b))
}

type abortedBody struct {
	Reason string `json:"reason"`
}

func harnessCompatible(want, have Harness) error {
	if want.Version != "" && want.Version != have.Version {
		return &BlockedError{Blockers: []Blocker{{Code: BlockHarnessDrift, Stage: "start",
			Detail:   fmt.Sprintf("the profile requires harness version %s; this is %s", want.Version, have.Version),
			Recovery: []string{"run the harness version the profile names", "update harness.version in the profile and approve it again"}}}}
	}
	if want.BinaryDigest != "" && want.BinaryDigest != have.BinaryDigest {
		return &BlockedError{Blockers: []Blocker{{Code: BlockHarnessDrift, Stage: "start",
			Detail:   fmt.Sprintf("the profile requires harness binary %s; this one is %s", want.BinaryDigest, have.BinaryDigest),
			Recovery: []string{"run the harness binary the profile names", "update harness.binaryDigest in the profile and approve it again"}}}}
	}
	return nil
}

func newRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "r" + now.Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(b[:])
}

// projectPath returns p relative to the project (slash-separated) when inside it, else absolute.
func projectPath(project, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(project, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel), nil
	}
	return abs, nil
}

func resolve(project, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(project, filepath.FromSlash(p))
}

// renderArtifact writes an artifact: frontmatter, a heading and the JSON of v in a fenced block.
func renderArtifact(run, id, title string, created time.Time, v any) []byte {
	return renderStageArtifact(run, id, title, stageOf(id), 1, created, v)
}

// renderStageArtifact is renderArtifact for an artifact of a stage attempt.
func renderStageArtifact(run, id, title, stage string, attempt int, created time.Time, v any) []byte {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return fmt.Appendf(nil, "---\nid: %s\ntype: %s\nschemaVersion: %d\nrun: %s\nstage: %s\nattempt: %d\ninputReferences: []\ncreated: %s\n---\n# %s\n\n```json\n%s\n```\n",
		id, id, SchemaVersion, run, stage, attempt, created.Format(time.RFC3339), title, body)
}

func stageOf(id string) string {
	if id == ArtPreflight {
		return StagePreflight
	}
	return "start"
}

// decodeArtifact reads the JSON block of an artifact written by renderArtifact.
func decodeArtifact(data []byte, v any) error {
	a, err := artifact.Parse(data)
	if err != nil {
		return err
	}
	body := string(a.Body)
	i := strings.Index(body, "```json\n")
	j := strings.LastIndex(body, "\n```")
	if i < 0 || j < i+8 {
		return errors.New("no JSON block")
	}
	dec := json.NewDecoder(strings.NewReader(body[i+8 : j]))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// writeImmutable writes a new file durably and makes it read-only; it never replaces one.
func writeImmutable(path string, data []byte) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists; run artifacts are never replaced", path)
	}
	if err := atomicfile.Write(path, data, 0o444); err != nil {
		return err
	}
	return nil
}

// lookCommand says whether argv[0] resolves: a path (relative to the project) or a PATH name.
func lookCommand(project, name string) error {
	if strings.ContainsRune(name, '/') {
		fi, err := os.Stat(resolve(project, name))
		if err != nil {
			return err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return errors.New("not an executable file")
		}
		return nil
	}
	_, err := exec.LookPath(name)
	return err
}

var _ = slices.Contains[[]string]
