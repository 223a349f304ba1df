package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
)

// attemptsByStage counts the run ledger's stage.attempt records per stage, and its
// gate.decision records per gate (keyed "gate:NAME").
func attemptsByStage(t *testing.T, env Env, id string) map[string]int {
	t.Helper()
	l, _, err := ledger.OpenReadOnly(runDir(env.Home, id), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := map[string]int{}
	for rec, err := range l.Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case KindStageAttempt:
			var a Attempt
			if err := json.Unmarshal(rec.Body, &a); err != nil {
				t.Fatal(err)
			}
			n[a.Stage]++
		case KindGateDecision:
			var g GateDecision
			if err := json.Unmarshal(rec.Body, &g); err != nil {
				t.Fatal(err)
			}
			n["gate:"+g.Gate]++
		}
	}
	return n
}

// approveOpenGate approves the gate the run waits at with the digest status shows.
func approveOpenGate(t *testing.T, env Env, id, gate string) {
	t.Helper()
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Gates {
		if g.Gate == gate {
			if g.State != "awaiting approval" {
				t.Fatalf("gate %s is %s, want awaiting approval", gate, g.State)
			}
			if _, err := ApproveGate(env, id, gate, artifact.Digest(g.Digest), "ana"); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// artifactFiles reads every file of the run's artifact directory.
func artifactFiles(t *testing.T, env Env, id string) map[string]string {
	t.Helper()
	dir := filepath.Join(projectOf(t, env, id), filepath.FromSlash(RunsDir), id)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

// TestRelockRerunsExactlyDownstream: a run past the Ticket Plan Gate whose guidance drifts is
// relocked; every artifact made from the guidance and every gate approval is invalidated, the
// run goes back to Research, and exactly Research, Specification and Ticket Planning run again
// (once each), with both gates approved anew; the run's earlier artifacts stay as they were.
func TestRelockRerunsExactlyDownstream(t *testing.T) {
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	current := ""
	requests := map[string]string{}
	watchStages(&env, &current, func(stage string, req *llm.Request) {
		if _, ok := requests[stage]; !ok {
			requests[stage] = req.Messages[len(req.Messages)-1].Text()
		}
	})
	advanceTo(t, env, id, StageTicketPlanGate, func(s string) { current = s })
	approveOpenGate(t, env, id, GateTicketPlan)
	before := attemptsByStage(t, env, id)
	files := artifactFiles(t, env, id)
	project := projectOf(t, env, id)
	write(t, filepath.Join(project, "AGENTS.md"), "# other rules\n")
	_, err := Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || be.Blockers[0].Code != BlockGuidanceDrift ||
		!slices.ContainsFunc(be.Blockers[0].Recovery, func(o string) bool {
			return strings.Contains(o, "`rein run relock "+id+" --input guidance:AGENTS.md --approver WHO`")
		}) {
		t.Fatalf("next after the edit = %v; want run_guidance_drift offering the relock", err)
	}

	res, err := Relock(env, id, "guidance:AGENTS.md", "ana")
	if err != nil {
		t.Fatalf("relock: %v", err)
	}
	if res.OldDigest != artifact.Sum([]byte("# rules\n")) || res.NewDigest != artifact.Sum([]byte("# other rules\n")) ||
		res.Approver != "ana" || res.RestartStage != StageResearch ||
		!slices.Equal(res.Stale, []string{ArtResearch, ArtSpec, ArtTicketPlan}) || !slices.Equal(res.Gates, []string{GateSpec, GateTicketPlan}) ||
		!slices.Equal(res.Changed, []string{"guidance:AGENTS.md"}) {
		t.Fatalf("relock = %+v", res.LockAmendment)
	}
	ks := kinds(t, env, id)
	if i := slices.Index(ks, KindLockAmended); i < 0 || !slices.Contains(ks[i:], KindBlockerLifted) {
		t.Fatalf("ledger %v: want lock.amended, then the drift lifted", ks)
	}

	snap := snapshotRun(t, env, id)
	rep, err := Status(env, id)
	if err != nil || rep.State != StateReady || rep.Stage != StageResearch || len(rep.Relocks) != 1 || len(rep.Stale) != 0 {
		t.Fatalf("status after the relock = %+v, %v", rep, err)
	}
	sameFiles(t, "status after a relock", snap, snapshotRun(t, env, id))
	if g := rep.Locked.Guidance[0]; g.Digest != string(res.NewDigest) {
		t.Fatalf("status shows locked guidance %s, want the relocked %s", g.Digest, res.NewDigest)
	}
	for _, g := range rep.Gates {
		if g.State == GateApproved {
			t.Fatalf("gate %s still approved after the relock: %+v", g.Gate, g)
		}
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	for _, want := range []string{"relock 1: guidance:AGENTS.md " + string(res.OldDigest) + " -> " + string(res.NewDigest) + " by ana",
		"invalidated (made from what changed): research, spec, ticket-plan; gate approvals: spec, ticket-plan", "re-run from: research"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("status text lacks %q:\n%s", want, text.String())
		}
	}

	clear(requests)
	advanceTo(t, env, id, StageTicketPlanGate, func(s string) { current = s })
	approveOpenGate(t, env, id, GateTicketPlan)
	after := attemptsByStage(t, env, id)
	for k, n := range before {
		if after[k] != n+1 {
			t.Errorf("%s: %d before the relock, %d after; want exactly one more", k, n, after[k])
		}
	}
	if len(after) != len(before) {
		t.Errorf("after the relock %v ran, before %v", after, before)
	}
	for _, s := range []string{StageResearch, StageSpecification, StageTicketPlanning} {
		if req := requests[s]; !strings.Contains(req, "# other rules") || strings.Contains(req, "# rules") {
			t.Errorf("the re-run's %s request does not carry the relocked guidance:\n%.400s", s, req)
		}
	}
	now := artifactFiles(t, env, id)
	for name, data := range files {
		if now[name] != data {
			t.Errorf("%s changed across the relock and the re-run", name)
		}
	}
	for _, name := range []string{"execution-lock-amendment-1.md", "research-2.md", "spec-2.md", "ticket-plan-2.md"} {
		if _, ok := now[name]; !ok {
			t.Errorf("no %s after the re-run (files %v)", name, slices.Sorted(mapsKeys(now)))
		}
	}
	if rep, err := Status(env, id); err != nil || rep.Stage != "ticket-execution" {
		t.Fatalf("status after the re-run = %+v, %v", rep, err)
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestRelockDropsClarification: a restart before Clarification supersedes the answers; the
// person answers again (clarification-2.md) and the first answers stay as they were.
func TestRelockDropsClarification(t *testing.T) {
	env0, first := startRun(t)
	project := projectOf(t, env0, first)
	if _, err := git(project, "branch", "rein/existing"); err != nil {
		t.Fatal(err)
	}
	env := workflowEnv(env0.Home)
	id, err := Start(env, StartOptions{Project: project, Requirement: filepath.Join(project, "req.md"), Branch: "rein/existing"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	if _, err := Clarify(env, id, map[string]string{"branch-exists": "build on it"}); err != nil {
		t.Fatal(err)
	}
	advanceTo(t, env, id, StageSpecGate, nil)
	write(t, filepath.Join(project, "AGENTS.md"), "# other rules\n")
	res, err := Relock(env, id, "guidance:AGENTS.md", "ana")
	if err != nil || !slices.Equal(res.Stale, []string{ArtResearch, ArtClarification, ArtSpec}) || len(res.Gates) != 0 {
		t.Fatalf("relock = %+v, %v", res.LockAmendment, err)
	}
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("research again: %v", err)
	}
	if _, err := Next(context.Background(), env, id); !errors.As(err, new(*BlockedError)) || !strings.Contains(err.Error(), BlockClarificationRequired) {
		t.Fatalf("next after the re-run research = %v; want the gap asked again", err)
	}
	ref, err := Clarify(env, id, map[string]string{"branch-exists": "still build on it"})
	if err != nil || !strings.HasSuffix(ref.Path, "/clarification-2.md") {
		t.Fatalf("clarify again = %+v, %v", ref, err)
	}
	advanceTo(t, env, id, StageSpecGate, nil)
	if rep, err := Status(env, id); err != nil || len(rep.Blockers) != 0 {
		t.Fatalf("status = %+v, %v", rep, err)
	}
}

// TestRelockProfile: a profile relock needs the edited profile approved; a change of the
// writer's model invalidates nothing the run has made (no writer stage ran), a change of the
// workflow role's budget every workflow stage's artifact.
func TestRelockProfile(t *testing.T) {
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	advanceTo(t, env, id, StageSpecGate, nil)
	project := projectOf(t, env, id)
	editProfile := func(edit func(*Profile)) {
		lp, err := LoadProfile(project)
		if err != nil {
			t.Fatal(err)
		}
		edit(&lp.Profile)
		data, _ := lp.Marshal()
		write(t, filepath.Join(project, ProfilePath), string(data))
	}
	editProfile(func(p *Profile) { m := p.Models[RoleWriter]; m.Model = "other"; p.Models[RoleWriter] = m })
	if _, err := Relock(env, id, "models.writer", "ana"); !errors.Is(err, ErrNotRelockable) || !strings.Contains(err.Error(), "--input profile") {
		t.Fatalf("relock models.writer = %v; want a refusal naming --input profile", err)
	}
	if _, err := Relock(env, id, InputProfile, "ana"); !errors.Is(err, ErrNotApproved) || !strings.Contains(err.Error(), "rein profile approve") {
		t.Fatalf("relock of an unapproved profile = %v; want %v", err, ErrNotApproved)
	}
	if _, err := Approve(project, "bo", time.Now()); err != nil {
		t.Fatal(err)
	}
	res, err := Relock(env, id, InputProfile, "bo")
	if err != nil || res.RestartStage != "" || len(res.Stale) != 0 || !slices.Equal(res.Changed, []string{"models.writer", InputProfile}) {
		t.Fatalf("relock of the writer's model = %+v, %v; want nothing stale", res.LockAmendment, err)
	}
	rep, err := Status(env, id)
	if err != nil || rep.Stage != StageSpecGate || rep.Locked.Models[RoleWriter].Model != "other" {
		t.Fatalf("status = %+v, %v; want the run still at the Spec Gate on the new lock", rep, err)
	}

	editProfile(func(p *Profile) { m := p.Models[RoleWorkflow]; m.Budget.ModelTurns++; p.Models[RoleWorkflow] = m })
	if _, err := Approve(project, "bo", time.Now()); err != nil {
		t.Fatal(err)
	}
	res, err = Relock(env, id, InputProfile, "bo")
	if err != nil || res.N != 2 || res.RestartStage != StageResearch || !slices.Equal(res.Stale, []string{ArtResearch, ArtSpec}) {
		t.Fatalf("relock of the workflow budget = %+v, %v", res.LockAmendment, err)
	}
	before := attemptsByStage(t, env, id)
	advanceTo(t, env, id, StageSpecGate, nil)
	if after := attemptsByStage(t, env, id); after[StageResearch] != before[StageResearch]+1 || after[StageSpecification] != before[StageSpecification]+1 {
		t.Fatalf("attempts %v → %v; want research and specification once more", before, after)
	}
}

// TestRelockRefusals: without an approver, on an input that has not drifted, on one never
// relocked, or naming no input, the relock is refused and writes nothing.
func TestRelockRefusals(t *testing.T) {
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, researchModel)
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	project := projectOf(t, env, id)
	snap := snapshotRun(t, env, id)
	for _, c := range []struct {
		input, approver string
		want            error
		says            string
	}{
		{"guidance:AGENTS.md", "ana", ErrNotDrifted, "matches run"},
		{InputHarness, "ana", ErrNotDrifted, "matches run"},
		{"guidance:AGENTS.md", " ", ErrUsage, "--approver"},
		{InputRequirement, "ana", ErrNotRelockable, "restore the requirement source"},
		{InputWorkflow, "ana", ErrNotRelockable, "runs the locked workflow"},
		{InputLock, "ana", ErrNotRelockable, "restore the run's execution-lock.md"},
		{"models.workflow", "ana", ErrNotRelockable, "--input profile"},
		{"colour", "ana", ErrUsage, "names no locked input"},
		{"guidance:NOTES.md", "ana", ErrUsage, "has no input guidance:NOTES.md"},
	} {
		if _, err := Relock(env, id, c.input, c.approver); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("relock %s by %q = %v; want %v saying %q", c.input, c.approver, err, c.want, c.says)
		}
	}
	// A drifted requirement is refused too, naming its recovery.
	write(t, filepath.Join(project, "req.md"), "# Do another thing\n")
	if _, err := Relock(env, id, InputRequirement, "ana"); !errors.Is(err, ErrNotRelockable) {
		t.Errorf("relock of a drifted requirement = %v", err)
	}
	write(t, filepath.Join(project, "req.md"), "# Do a thing\n")
	sameFiles(t, "refused relocks", snap, snapshotRun(t, env, id))
}

// TestRelockHarness: a harness upgrade relocked by the new binary sends the run back to its
// first model stage; the old binary then drifts.
func TestRelockHarness(t *testing.T) {
	env, id := startRunWith(t, func(p *Profile) { p.Harness = Harness{} }) // accepts any harness
	env.Agents = testAgents(env.Home, researchModel)
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	other := env
	other.Harness = Harness{Version: "v2", BinaryDigest: "sha256:" + strings.Repeat("b", 64)}
	_, err := Next(context.Background(), other, id)
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Blockers) != 1 || len(be.Blockers[0].Recovery) != 3 ||
		!strings.Contains(be.Blockers[0].Recovery[1], "`rein run relock "+id+" --input harness --approver WHO`") {
		t.Fatalf("next from another harness = %v; want the harness drift offering the relock second", err)
	}
	res, err := Relock(other, id, InputHarness, "ana")
	if err != nil || res.NewDigest != artifact.Digest(other.Harness.BinaryDigest) || res.RestartStage != StageResearch {
		t.Fatalf("relock harness = %+v, %v", res.LockAmendment, err)
	}
	wantBlocker(t, env, id, BlockHarnessDrift)
	if rep, err := Status(other, id); err != nil || rep.Stage != StageResearch || rep.Locked.Harness != other.Harness {
		t.Fatalf("status from the relocked binary = %+v, %v", rep, err)
	}
	if stage, err := Next(context.Background(), other, id); err != nil || stage != StageResearch {
		t.Fatalf("next on the relocked harness = %s, %v", stage, err)
	}
}

// TestEveryRecoveryOptionWorks walks each recovery option each relockable drift prints, on a
// run past Research: following it leaves the run without that drift (or aborted, for abort).
// An option this test does not know fails it, so a new option must be walked here.
func TestEveryRecoveryOptionWorks(t *testing.T) {
	other := Harness{Version: "v2", BinaryDigest: "sha256:" + strings.Repeat("b", 64)}
	drifts := []struct {
		name  string
		drift func(t *testing.T, env *Env, project string) (restore func())
	}{
		{"guidance", func(t *testing.T, env *Env, p string) func() {
			write(t, filepath.Join(p, "AGENTS.md"), "# other rules\n")
			return func() { write(t, filepath.Join(p, "AGENTS.md"), "# rules\n") }
		}},
		{"skill", func(t *testing.T, env *Env, p string) func() {
			write(t, filepath.Join(p, "skills", "careful", "SKILL.md"), "# Careless\n")
			return func() {
				write(t, filepath.Join(p, "skills", "careful", "SKILL.md"), carefulFiles["skills/careful/SKILL.md"])
			}
		}},
		{"profile", func(t *testing.T, env *Env, p string) func() {
			data, err := os.ReadFile(filepath.Join(p, ProfilePath))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(p, ProfilePath), strings.Replace(string(data), "modelTurns: 20", "modelTurns: 21", 1))
			return func() { write(t, filepath.Join(p, ProfilePath), string(data)) }
		}},
		{"harness", func(t *testing.T, env *Env, p string) func() {
			locked := env.Harness
			env.Harness = other
			return func() { env.Harness = locked }
		}},
	}
	for _, d := range drifts {
		env, id, project := startSkillRun(t, carefulFiles, mapSkills)
		env.Agents = testAgents(env.Home, workflowModel)
		if _, err := Next(context.Background(), env, id); err != nil {
			t.Fatal(err)
		}
		probe := env
		restore := d.drift(t, &probe, project)
		_, err := Next(context.Background(), probe, id)
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Fatalf("%s: next = %v, want blocked", d.name, err)
		}
		restore()
		for _, b := range be.Blockers {
			for i := range b.Recovery {
				t.Run(d.name+"/"+b.Code+"/"+itoa(i), func(t *testing.T) {
					env, id, project := startSkillRun(t, carefulFiles, mapSkills)
					env.Agents = testAgents(env.Home, workflowModel)
					if _, err := Next(context.Background(), env, id); err != nil {
						t.Fatal(err)
					}
					probe := env
					restore := d.drift(t, &probe, project)
					_, err := Next(context.Background(), probe, id)
					var be *BlockedError
					if !errors.As(err, &be) {
						t.Fatalf("next = %v, want blocked", err)
					}
					opt := be.Blockers[slices.IndexFunc(be.Blockers, func(o Blocker) bool { return o.Code == b.Code })].Recovery[i]
					follow(t, probe, id, project, opt, restore)
				})
			}
		}
	}
}

// follow carries out recovery option opt of a drift of run id and checks the drift is gone.
func follow(t *testing.T, env Env, id, project, opt string, restore func()) {
	t.Helper()
	switch {
	case strings.HasPrefix(opt, "abort the run"), strings.HasSuffix(opt, "abort this run and start a new one"):
		if err := Abort(env, id, "test"); err != nil {
			t.Fatal(err)
		}
		if rep, _ := Status(env, id); rep.State != "aborted" {
			t.Fatalf("after %q the run is %s", opt, rep.State)
		}
		return
	case strings.HasPrefix(opt, "restore "), strings.HasPrefix(opt, "continue with the locked binary"):
		restore()
		if strings.HasPrefix(opt, "continue") {
			env.Harness = Harness{Version: "v1", BinaryDigest: "sha256:" + strings.Repeat("a", 64)}
		}
	case strings.Contains(opt, "so first change harness in "+ProfilePath):
		data, err := os.ReadFile(filepath.Join(project, ProfilePath))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(project, ProfilePath), strings.Replace(string(data), "version: v1", "version: "+env.Harness.Version, 1))
		if _, err := Approve(project, "ana", time.Now()); err != nil {
			t.Fatal(err)
		}
		var be *BlockedError
		if _, err := Relock(env, id, InputProfile, "ana"); err != nil && (!errors.As(err, &be) || len(be.Blockers) != 1 || be.Blockers[0].Code != BlockHarnessDrift) {
			t.Fatalf("relock of the profile accepting this harness = %v", err)
		}
		if _, err := Relock(env, id, InputHarness, "ana"); err != nil {
			t.Fatalf("relock of the harness after the profile's = %v", err)
		}
	case strings.Contains(opt, "`rein run relock "):
		cmd := opt[strings.Index(opt, "`rein run relock ")+1:]
		args := strings.Fields(cmd[:strings.Index(cmd, "`")])
		if len(args) != 8 || args[3] != id || args[4] != "--input" || args[6] != "--approver" {
			t.Fatalf("option %q names no relock of this run", opt)
		}
		if strings.Contains(opt, "rein profile approve") {
			if _, err := Approve(project, "ana", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Relock(env, id, args[5], "ana"); err != nil {
			t.Fatalf("following %q: %v", opt, err)
		}
	default:
		t.Fatalf("recovery option %q is not walked by this test", opt)
	}
	if stage, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("after %q: next = %s, %v", opt, stage, err)
	}
}

// TestRelockBesideLeftover: an amendment file a crashed relock left without its record was
// never in force: it stays, status ignores it, and the next relock goes beside it.
func TestRelockBesideLeftover(t *testing.T) {
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, researchModel)
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	project := projectOf(t, env, id)
	leftover := filepath.Join(project, filepath.FromSlash(RunsDir), id, ArtLockAmendment+"-1.md")
	write(t, leftover, "---\nid: execution-lock-amendment\n---\n# left by a crash\n")
	write(t, filepath.Join(project, "AGENTS.md"), "# other rules\n")
	res, err := Relock(env, id, "guidance:AGENTS.md", "ana")
	if err != nil || !strings.HasSuffix(res.Artifact.Path, "/"+ArtLockAmendment+"-1.2.md") {
		t.Fatalf("relock beside a leftover = %+v, %v", res.Artifact, err)
	}
	if data, err := os.ReadFile(leftover); err != nil || !strings.Contains(string(data), "left by a crash") {
		t.Fatalf("the leftover is gone or changed: %v", err)
	}
	if rep, err := Status(env, id); err != nil || rep.Locked.Guidance[0].Digest != string(res.NewDigest) {
		t.Fatalf("status = %+v, %v", rep, err)
	}
}

// TestEditedAmendmentIsLockTampering: an amendment's bytes are bound by the ledger like the
// lock's; editing one is run_lock_tampered, and restoring it lifts the blocker.
func TestEditedAmendmentIsLockTampering(t *testing.T) {
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, researchModel)
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	project := projectOf(t, env, id)
	write(t, filepath.Join(project, "AGENTS.md"), "# other rules\n")
	res, err := Relock(env, id, "guidance:AGENTS.md", "ana")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(project, filepath.FromSlash(res.Artifact.Path))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, p, strings.Replace(string(data), string(res.NewDigest), string(res.OldDigest), 1))
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), BlockLockTampered) ||
		!strings.Contains(err.Error(), "amendment 1") {
		t.Fatalf("next on an edited amendment = %v; want %s naming it", err, BlockLockTampered)
	}
	write(t, p, string(data))
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("next after restoring the amendment = %v", err)
	}
}

// TestRelockSkillRerunsOnlyItsStages: a skill mapped only to Specification, relocked after
// the Spec Gate, invalidates the specification (and what was made from it) but not Research:
// the run goes back to Specification, and Research keeps its artifact and runs no new attempt.
func TestRelockSkillRerunsOnlyItsStages(t *testing.T) {
	env, id, project := startSkillRun(t, carefulFiles, mapSkills)
	env.Agents = testAgents(env.Home, workflowModel)
	advanceTo(t, env, id, StageTicketPlanning, func(string) {})
	before := attemptsByStage(t, env, id)
	write(t, filepath.Join(project, "skills", "speconly", "SKILL.md"), "# Spec only, revised\n")
	res, err := Relock(env, id, "skill:speconly", "ana")
	if err != nil {
		t.Fatalf("relock: %v", err)
	}
	if res.RestartStage != StageSpecification || slices.Contains(res.Stale, ArtResearch) || !slices.Contains(res.Stale, ArtSpec) {
		t.Fatalf("relock of a specification-only skill = %+v; want spec stale, research kept, restart at specification", res.LockAmendment)
	}
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	after := attemptsByStage(t, env, id)
	if after[StageResearch] != before[StageResearch] || after[StageSpecification] != before[StageSpecification]+1 {
		t.Fatalf("attempts %v → %v; want one new specification attempt and none of research", before, after)
	}
}
