package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/loop"
	delivery "github.com/reinhq/rein/internal/run"
)

const goalRunContract = `trigger: manual
goal: the delivery run reaches Delivery Ready
verification:
  - id: delivery
    delivery_run: delivery-ready
stop:
  success: all verification passes
  failure: same root cause fails 3 times in a row
  budget: {rounds: 40}
memory:
  exclude: [secrets]
human_gate:
  required_for: [push]
`

// goalLoop is a loop whose goal is a delivery run, started in a fresh rein home on the
// fixture of goalRunRepo; rein runs the CLI in-process (the process's directory is repo).
type goalLoop struct {
	home, repo, run, id, contract string
	rein                          func(args ...string) (int, string)
}

// newGoalLoop sets up goalRunRepo, starts its delivery run and a loop whose goal is it.
func newGoalLoop(t *testing.T) *goalLoop {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	g := &goalLoop{home: filepath.Join(dir, "home"), repo: filepath.Join(dir, "repo"), contract: filepath.Join(dir, "loop.yaml")}
	t.Setenv("REIN_HOME", g.home)
	t.Setenv("HOME", filepath.Join(dir, "user"))
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude-config"))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	goalRunRepo(t, g.repo)
	req := filepath.Join(dir, "requirement.md")
	for f, s := range map[string]string{req: demoRequirement, g.contract: goalRunContract} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(g.repo)
	g.rein = func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
		return code, out.String() + errb.String()
	}
	_, out := g.rein("run", "start", "--requirement", req)
	runID := regexp.MustCompile(`run: (\S+)`).FindStringSubmatch(out)
	if runID == nil {
		t.Fatalf("rein run start: %s", out)
	}
	g.run = runID[1]
	return g
}

// start starts the loop (rein loop start --run).
func (g *goalLoop) start(t *testing.T) {
	t.Helper()
	code, out := g.rein("loop", "start", g.contract, "--run", g.run)
	if code != 0 {
		t.Fatalf("loop start: exit %d\n%s", code, out)
	}
	g.id = regexp.MustCompile(`loop: (\S+)`).FindStringSubmatch(out)[1]
}

// drive runs the loop to its end as a person would — rein loop run, and rein run approve
// for every gate the run waits at — checking after each rein loop run that the loop waits
// exactly when the run does and completes exactly when the run is at Delivery Ready. It
// returns the run's gates in the order the loop waited at them.
func (g *goalLoop) drive(t *testing.T) []string {
	t.Helper()
	env := loop.Env{Home: g.home}
	var gates []string
	for range 6 {
		code, out := g.rein("loop", "run", g.id)
		rep, err := loop.Status(env, g.id)
		if err != nil {
			t.Fatal(err)
		}
		rs := runStatus(t, g.rein, g.run)
		if rep.State == loop.StateCompleted {
			if rs.Stage != "delivery-ready" || code != 0 {
				t.Fatalf("the loop completed with the run at %s (exit %d)\n%s", rs.Stage, code, out)
			}
			return gates
		}
		if code != 4 || rep.State != loop.StateWaitingForHuman || rep.Reason != loop.ReasonRunWaiting || rs.State != "waiting_for_human" || rs.Waiting.Gate == "" || rs.Stage == "delivery-ready" {
			t.Fatalf("loop %s (%s), exit %d, run %s at %s: the loop must wait exactly when the run does\n%s", rep.State, rep.Reason, code, rs.State, rs.Stage, out)
		}
		if !strings.Contains(rep.Detail, "gate "+rs.Waiting.Gate) || !strings.Contains(rep.Next, "rein run status "+g.run) {
			t.Fatalf("detail %q, next %q: the loop must name what the run waits for", rep.Detail, rep.Next)
		}
		// Nothing moves while the run waits.
		if code, _ := g.rein("loop", "run", g.id); code != 4 {
			t.Fatalf("loop run while the run waits: exit %d", code)
		}
		if again, _ := loop.Status(env, g.id); again.Rounds != rep.Rounds {
			t.Fatalf("a round ran while the run waited for a person")
		}
		gates = append(gates, rs.Waiting.Gate)
		if code, out := g.rein("run", "approve", g.run, "--gate", rs.Waiting.Gate, "--digest", rs.Waiting.Digest, "--approver", "ana"); code != 0 {
			t.Fatalf("run approve: exit %d\n%s", code, out)
		}
	}
	t.Fatal("the loop never completed")
	return nil
}

// TestLoopGoalIsADeliveryRun: a loop whose goal is a delivery run (script models, offline,
// the fixture of goalRunRepo) advances the run by one stage a round through the run engine,
// waits for a person whenever the run does (its gates), and completes only when the run is
// at Delivery Ready.
func TestLoopGoalIsADeliveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole delivery run")
	}
	g := newGoalLoop(t)
	if code, out := g.rein("loop", "start", g.contract); code != 2 || !strings.Contains(out, "--run RUN") {
		t.Fatalf("a delivery-run goal without --run: exit %d\n%s", code, out)
	}
	g.start(t)
	if gates := g.drive(t); strings.Join(gates, " ") != "spec ticket-plan run" {
		t.Fatalf("the loop waited at %v, want the run's three gates", gates)
	}
	_, cps, err := loop.History(loop.Env{Home: g.home}, g.id)
	if err != nil {
		t.Fatal(err)
	}
	for i, cp := range cps {
		passed := cp.Verification[0].Passed
		if last := i == len(cps)-1; passed != last {
			t.Fatalf("round %d: delivery check passed %t (%s): only the round that reaches Delivery Ready passes", cp.Round, passed, cp.CompletedScope)
		}
		from, to, _ := strings.Cut(strings.TrimPrefix(cp.CompletedScope, "delivery run "+g.run+": "), " -> ")
		// Each round advances the run by one stage; the last one may find it already at
		// Delivery Ready (approving the run gate delivered it) and only verifies.
		if from == to && !(i == len(cps)-1 && to == "delivery-ready") {
			t.Fatalf("round %d did not advance the run: %s", cp.Round, cp.CompletedScope)
		}
	}
}

type runStatusJSON struct {
	State   string `json:"state"`
	Stage   string `json:"stage"`
	Waiting struct {
		Gate   string `json:"gate"`
		Digest string `json:"digest"`
	} `json:"waiting"`
}

func runStatus(t *testing.T, rein func(...string) (int, string), id string) runStatusJSON {
	t.Helper()
	_, out := rein("run", "status", id, "--json")
	var s runStatusJSON
	if i := strings.Index(out, "{"); i < 0 || json.NewDecoder(strings.NewReader(out[i:])).Decode(&s) != nil {
		t.Fatalf("run status --json: %s", out)
	}
	return s
}

// The scenarios of goalRunRepo: the demo's Research and Specification, a one-ticket plan,
// one writer attempt and a review that accepts it.
const (
	goalRunWorkflow = `version: 1
model: script-workflow
dialogs:
  - match: 'stage research,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              stage: research
              establishedEvidence:
                - {id: e1, statement: The package calc has no Add yet., references: [requirement]}
              remainingUnknowns: []
              requiredEvidenceUnavailable: []
              clarificationQuestions: []
      - text: Research submitted.
  - match: 'stage specification,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              title: Add in package calc
              sections:
                - id: s1
                  title: Scope
                  body: Package calc gets Add.
                  items:
                    - {id: r1, kind: requirement, statement: "Add(a, b int) int returns a + b."}
                    - {id: a1, kind: acceptance, statement: add.go is on the delivery branch.}
              inputReferences: [requirement, research]
      - text: Specification submitted.
  - match: 'stage ticket-planning,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              tickets:
                - {id: t1, title: Add, specItemIds: [r1, a1], dependsOn: []}
      - text: Ticket plan submitted.
`
	goalRunWriter = `version: 1
model: script-writer
dialogs:
  - match: 'ticket t1, attempt 1\.'
    turns:
      - calls:
          - name: write
            args: {path: add.go, content: "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a + b }\n"}
      - calls:
          - name: rein_ticket_candidate
            args: {ticketId: t1, summary: Adds Add.}
      - text: Candidate submitted.
`
	goalRunReview = `version: 1
model: script-reviewer
dialogs:
  - match: 'candidate digest: (?P<digest>sha256:[0-9a-f]{64})'
    turns:
      - calls:
          - name: rein_ticket_review
            args: {candidateDigest: "${digest}", blockingFindings: [], advisoryFindings: [], conclusion: accept}
      - text: Accepted.
`
)

// goalRunRepo is the demo's repository (setupDeliveryRepo) made cheap to deliver: the
// scenarios above (one ticket) and a verification that only checks the ticket's file is there
// (test -s add.go), not go test — the demo's real go test is TestScripts/demo_delivery's. The
// profile is approved again and everything committed on main.
func goalRunRepo(t *testing.T, repo string) {
	t.Helper()
	ctx := context.Background()
	if err := setupDeliveryRepo(ctx, repo, version()); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"workflow": goalRunWorkflow, "writer": goalRunWriter, "review": goalRunReview} {
		if err := os.WriteFile(filepath.Join(repo, ".rein", "scenarios", name+".yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lp, err := delivery.LoadProfile(repo)
	if err != nil {
		t.Fatal(err)
	}
	p := lp.Profile
	p.Verification = map[string]delivery.Verification{"added": {Argv: []string{"test", "-s", "add.go"}, Required: true}}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(delivery.ProfilePath)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := delivery.Approve(repo, "rein test", time.Now()); err != nil {
		t.Fatal(err)
	}
	g := gitx.Runner{Dir: repo}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "one ticket, a cheap verification"}} {
		if _, err := g.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
}
