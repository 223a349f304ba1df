package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/worktree"
)

// deliveryScenario answers Research, Specification (items r1, a1) and Ticket Planning: t1
// implements r1, t2 implements a1 and depends on t1.
const deliveryScenario = `version: 1
dialogs:
  - match: 'stage research,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              stage: research
              establishedEvidence: [{id: e1, statement: The requirement asks for two files., references: [requirement]}]
              remainingUnknowns: []
              requiredEvidenceUnavailable: []
              clarificationQuestions: []
      - text: Submitted.
  - match: 'stage specification,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              title: Two files
              sections:
                - id: s1
                  title: Scope
                  body: Write t1.txt and t2.txt.
                  items:
                    - {id: r1, kind: requirement, statement: t1.txt exists.}
                    - {id: a1, kind: acceptance, statement: t2.txt exists.}
              inputReferences: [requirement, research]
      - text: Submitted.
  - match: 'stage ticket-planning,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              tickets:
                - {id: t1, title: First file, specItemIds: [r1], dependsOn: []}
                - {id: t2, title: Second file, specItemIds: [a1], dependsOn: [t1]}
      - text: Submitted.
`

// deliveryRun is a run at Manual Integration whose tickets were accepted by the fixture.
type deliveryRun struct {
	env      Env
	id       string
	project  string
	branch   string
	base     string
	repo     *worktree.Repo
	git      gitx.Runner
	tickets  map[string]TicketAccepted
	attempts map[string]int
	deps     map[string][]string // the plan's dependsOn
}

// newDeliveryRun starts a run (verification: t2.txt must exist, and t1.txt is printed),
// takes it through the Ticket Plan Gate and accepts t1 and t2 (t2 depends on t1) with the
// files given.
func newDeliveryRun(t *testing.T, files map[string]map[string]string) *deliveryRun {
	t.Helper()
	return newDeliveryRunVerified(t, files, defaultVerification())
}

// defaultVerification is the fixture's verification: t2.txt must exist, t1.txt is printed.
func defaultVerification() map[string]Verification {
	return map[string]Verification{
		"files": {Argv: []string{"test", "-f", "t2.txt"}, Required: true},
		"show":  {Argv: []string{"cat", "t1.txt"}, Required: true},
		"never": {Argv: []string{"false"}},
	}
}

// newIndependentDeliveryRun is newDeliveryRun with a plan where t2 depends on nothing.
func newIndependentDeliveryRun(t *testing.T, files map[string]map[string]string) *deliveryRun {
	t.Helper()
	return newDeliveryRunPlan(t, files, strings.Replace(deliveryScenario, "dependsOn: [t1]", "dependsOn: []", 1), defaultVerification())
}

// newDeliveryRunVerified is newDeliveryRun with the profile's verification commands given.
func newDeliveryRunVerified(t *testing.T, files map[string]map[string]string, verification map[string]Verification) *deliveryRun {
	t.Helper()
	return newDeliveryRunPlan(t, files, deliveryScenario, verification)
}

// newDeliveryRunPlan is newDeliveryRun with the script scenario and verification given.
func newDeliveryRunPlan(t *testing.T, files map[string]map[string]string, scenario string, verification map[string]Verification) *deliveryRun {
	t.Helper()
	env, id := startRunWith(t, func(p *Profile) { p.Verification = verification })
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		return script.Parse([]byte(scenario), "delivery.yaml")
	})
	advanceTo(t, env, id, StageTicketPlanGate, nil)
	approveOpenGate(t, env, id, GateTicketPlan)
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	d := &deliveryRun{env: env, id: id, project: rep.Project, branch: rep.Branch, tickets: map[string]TicketAccepted{}, attempts: map[string]int{}, deps: map[string][]string{}}
	if strings.Contains(scenario, "dependsOn: [t1]") {
		d.deps["t2"] = []string{"t1"}
	}
	d.repo, err = worktree.OpenRepo(context.Background(), d.project)
	if err != nil {
		t.Fatal(err)
	}
	d.git = gitx.Runner{Dir: d.repo.Dir()}
	if d.base, err = d.git.Head(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := d.repo.CreateBranch(context.Background(), d.branch, d.base); err != nil {
		t.Fatal(err)
	}
	for _, ticket := range []string{"t1", "t2"} {
		d.accept(t, ticket, files[ticket], true)
	}
	d.appendRecord(t, KindStageCompleted, stageBody{Stage: "ticket-acceptance", Attempt: 1, Outcome: "accepted"})
	return d
}

// accept is a TEST FIXTURE standing in for the ticket loop (execution, review, verification,
// acceptance): it records the ticket's start (ticket.start: the run's base, or the accepted
// candidate it depends on) and makes the ticket's worktree from it with the real worktree package, writes files, freezes and seals the candidate, writes candidate, review and
// verification artifacts, and appends the ticket.accepted record through the run ledger API
// the engine uses.
func (d *deliveryRun) accept(t *testing.T, ticket string, files map[string]string, verified bool) {
	t.Helper()
	ctx := context.Background()
	d.attempts[ticket]++
	n := d.attempts[ticket]
	spec := worktree.StartSpec{Run: d.id, Ticket: ticket, Base: d.base}
	for _, dep := range d.deps[ticket] {
		spec.Deps = append(spec.Deps, worktree.Dep{Ticket: dep, Commit: d.tickets[dep].Candidate.Head})
	}
	start, err := d.repo.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	ts := TicketStart{Ticket: ticket, Base: d.base, DependsOn: []StartDep{}, Start: start}
	for _, dep := range spec.Deps {
		ts.DependsOn = append(ts.DependsOn, StartDep{Ticket: dep.Ticket, Commit: dep.Commit})
	}
	d.appendRecord(t, KindTicketStart, ts)
	w, err := d.repo.CreateAt(ctx, filepath.Join(d.env.Home, "worktrees", d.id, fmt.Sprintf("%s-%d", ticket, n)), d.branch, d.base, start)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		write(t, filepath.Join(w.Dir, name), content)
	}
	f, err := w.Freeze(ctx, worktree.FreezeSpec{Run: d.id, Ticket: ticket, Attempt: fmt.Sprint(n), Parent: start})
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, v any) artifact.Reference {
		rel := fmt.Sprintf("%s/%s/%s-%d.md", RunsDir, d.id, name, n)
		data := renderStageArtifact(d.id, name, name, "ticket-acceptance", 1, d.env.now(), v)
		ref, err := artifact.NewReference(name, rel, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeImmutable(filepath.Join(d.project, filepath.FromSlash(rel)), data); err != nil {
			t.Fatal(err)
		}
		return ref
	}
	cand := put("ticket-candidate-"+ticket, map[string]any{"ticket": ticket, "head": f.Head, "files": f.Files})
	c := worktree.Seal(f, string(cand.Digest))
	rec := TicketAccepted{Ticket: ticket, Attempt: n, Base: start,
		Candidate:    AcceptedCandidate{Digest: c.Digest, Head: c.Head, DiffDigest: c.DiffDigest, Artifact: cand},
		Review:       put("ticket-review-"+ticket, map[string]any{"candidateDigest": c.Digest, "blockingFindings": []string{}, "conclusion": "ok"}),
		Verification: put("ticket-verification-"+ticket, VerificationReport{Commit: c.Head, Commands: []CommandResult{}, Passed: verified}),
		WriterModel:  "script/writer", ReviewModel: "script/review"}
	d.appendRecord(t, KindTicketAccepted, rec)
	d.tickets[ticket] = rec
}

func (d *deliveryRun) appendRecord(t *testing.T, kind string, body any) {
	t.Helper()
	_, l, err := openRun(d.env.Home, d.id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(ledger.Entry{Kind: kind, Body: body}); err != nil {
		t.Fatal(err)
	}
}

func (d *deliveryRun) next(t *testing.T) (string, error) {
	t.Helper()
	return Next(context.Background(), d.env, d.id)
}

// mustNext runs the stage want, which must pass.
func (d *deliveryRun) mustNext(t *testing.T, want string) {
	t.Helper()
	if s, err := d.next(t); err != nil || s != want {
		t.Fatalf("Next = %s, %v; want %s passing", s, err, want)
	}
}

func (d *deliveryRun) branchHead(t *testing.T) string {
	t.Helper()
	h, ok, err := d.repo.BranchHead(context.Background(), d.branch)
	if err != nil || !ok {
		t.Fatalf("branch %s: %v", d.branch, err)
	}
	return h
}

func (d *deliveryRun) status(t *testing.T) *Report {
	t.Helper()
	rep, err := Status(d.env, d.id)
	if err != nil && !errors.Is(err, ErrBlocked) {
		t.Fatal(err)
	}
	return rep
}

// gitRun runs git in dir as a person would.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitx.Runner{Dir: dir}.Output(context.Background(), append([]string{"-c", "user.name=p", "-c", "user.email=p@e", "-c", "commit.gpgSign=false"}, args...)...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return out
}

func blockerCodes(err error) []string {
	var be *BlockedError
	if !errors.As(err, &be) {
		return nil
	}
	var codes []string
	for _, b := range be.Blockers {
		codes = append(codes, b.Code+": "+b.Detail)
	}
	return codes
}

func readProjectFile(t *testing.T, project, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(project, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
