package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// writerCanary is prose only the writer sessions hold; no review request may carry it.
const writerCanary = "CANARY-writer-5d2f"

// ticketPlanScenario answers Research and Specification as workflowScenario does, and plans
// two tickets, t2 depending on t1.
const ticketPlanScenario = `version: 1
dialogs:
  - match: 'stage research,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              stage: research
              establishedEvidence: [{id: e1, statement: The requirement asks for arithmetic., references: [requirement]}]
              remainingUnknowns: []
              requiredEvidenceUnavailable: []
              clarificationQuestions: []
      - text: Submitted.
  - match: 'stage specification,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              title: Arithmetic
              sections:
                - id: s1
                  title: Scope
                  body: Add and subtract.
                  items:
                    - {id: r1, kind: requirement, statement: Add adds two ints.}
                    - {id: a1, kind: acceptance, statement: Sub subtracts two ints.}
              inputReferences: [requirement, research]
      - text: Submitted.
  - match: 'stage ticket-planning,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              tickets:
                - {id: t2, title: Sub, specItemIds: [a1], dependsOn: [t1]}
                - {id: t1, title: Add, specItemIds: [r1], dependsOn: []}
      - text: Submitted.
`

// writerScenario: t1's first attempt has no test (its review blocks), its second adds one;
// t2 is done at once, with t1's Add (it compiles only in a worktree that holds t1's work). The writers' prose carries the canary.
const writerScenario = `
  - match: 'ticket t1, attempt 1\.'
    turns:
      - text: ` + writerCanary + ` writing Add.
        calls:
          - name: write
            args: {path: add.go, content: "package x\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n"}
      - calls:
          - name: rein_ticket_candidate
            args: {ticketId: t1, summary: Adds Add.}
      - text: Done.
  - match: 'ticket t1, attempt 2\.'
    turns:
      - text: ` + writerCanary + ` adding the test the review asked for.
        calls:
          - name: write
            args: {path: add_test.go, content: "package x\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n"}
      - calls:
          - name: rein_ticket_candidate
            args: {ticketId: t1, summary: Adds a test of Add.}
      - text: Done.
  - match: 'ticket t2, attempt 1\.'
    turns:
      - text: ` + writerCanary + ` writing Sub.
        calls:
          - name: write
            args: {path: sub.go, content: "package x\n\n// Sub subtracts, with t1's Add.\nfunc Sub(a, b int) int { return Add(a, -b) }\n"}
      - calls:
          - name: rein_ticket_candidate
            args: {ticketId: t2, summary: Adds Sub.}
      - text: Done.
`

var candidateDigestLine = regexp.MustCompile(`candidate digest: (sha256:[0-9a-f]{64})`)

// reviewAnswer scripts a review of the candidate the request names: blocking for the
// requests matching block, accepting otherwise.
func reviewAnswer(req string, block *regexp.Regexp) string {
	d := candidateDigestLine.FindStringSubmatch(req)
	digest := "sha256:none"
	if d != nil {
		digest = d[1]
	}
	review := fmt.Sprintf("{candidateDigest: %q, blockingFindings: [], advisoryFindings: [], conclusion: accept}", digest)
	if block != nil && block.MatchString(req) {
		review = fmt.Sprintf("{candidateDigest: %q, blockingFindings: [{id: f1, path: add.go, line: 4, statement: Add has no test.}], advisoryFindings: [], conclusion: request-changes}", digest)
	}
	return "version: 1\nturns:\n  - calls:\n      - name: rein_ticket_review\n        args: " + review + "\n  - text: Reviewed.\n"
}

// ticketModels answers every role: the workflow stages and writers from scenarios, reviews
// from the request (extra dialogs go before the writer's); see sees every request.
type ticketModels struct {
	extraWriter string
	// scenario, when set, replaces the whole scenario (workflow stages and writers).
	scenario string
	block    *regexp.Regexp
	review   func(req string) string // nil: reviewAnswer with block
	mu       sync.Mutex
	see      func(kind string, req *llm.Request)
}

func (tm *ticketModels) model(string, ModelPolicy) (llm.Model, error) {
	sc := ticketPlanScenario + tm.extraWriter + writerScenario
	if tm.scenario != "" {
		sc = tm.scenario
	}
	m, err := script.Parse([]byte(sc), "scenario.yaml")
	if err != nil {
		return nil, err
	}
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		first := ""
		for _, msg := range req.Messages {
			if msg.Role == llm.RoleUser {
				first = msg.Text()
				break
			}
		}
		kind := "workflow"
		switch {
		case strings.HasPrefix(first, "Ticket writer request"):
			kind = "writer"
		case strings.HasPrefix(first, "Ticket review request"):
			kind = "review"
		}
		if tm.see != nil {
			tm.mu.Lock()
			tm.see(kind, req)
			tm.mu.Unlock()
		}
		if kind == "review" {
			sc := reviewAnswer(first, tm.block)
			if tm.review != nil {
				sc = tm.review(first)
			}
			rm, err := script.Parse([]byte(sc), "review.yaml")
			if err != nil {
				panic(err)
			}
			return rm.Stream(ctx, req, emit)
		}
		return m.Stream(ctx, req, emit)
	}), nil
}

// startTicketRun starts a run in a Go module and takes it to the approved Ticket Plan Gate.
func startTicketRun(t *testing.T, tm *ticketModels, edit func(*Profile)) (Env, string) {
	t.Helper()
	env, id := startRunWith(t, edit)
	env.Agents = testAgents(env.Home, tm.model)
	advanceTo(t, env, id, StageTicketPlanGate, nil)
	approveOpenGate(t, env, id, GateTicketPlan)
	return env, id
}

// ticketRecords returns the bodies of the run ledger's records of kind.
func ticketRecords(t *testing.T, env Env, id, kind string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for rec, err := range mustReadLedger(t, filepath.Join(env.Home, "runs", id)) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == kind {
			out = append(out, rec.Body)
		}
	}
	return out
}

// TestTicketsDeliver runs two tickets (t2 depends on t1, listed first) through `rein run
// next`: t1's first candidate gets a blocking finding, its second attempt (with the review
// as an input artifact) is accepted; each acceptance is recorded with the handoff fields,
// and the run moves to manual-integration. No review request carries the writers' canary.
func TestTicketsDeliver(t *testing.T) {
	var mu sync.Mutex
	reviews, writers := []string{}, []string{}
	tm := &ticketModels{block: regexp.MustCompile(`ticket t1, review attempt 1\.`)}
	tm.see = func(kind string, req *llm.Request) {
		data, _ := json.Marshal(req)
		mu.Lock()
		defer mu.Unlock()
		switch kind {
		case "review":
			reviews = append(reviews, string(data))
		case "writer":
			writers = append(writers, string(data))
		}
	}
	env, id := startTicketRun(t, tm, nil)
	stage, err := Next(context.Background(), env, id)
	if err != nil {
		t.Fatalf("Next = %s, %v\n%s", stage, err, ticketStatusText(env, id))
	}
	rep, err := Status(env, id)
	if err != nil || rep.Stage != "manual-integration" {
		t.Fatalf("status = %+v, %v", rep, err)
	}
	acc := ticketRecords(t, env, id, KindTicketAccepted)
	if len(acc) != 2 {
		t.Fatalf("%d ticket.accepted records", len(acc))
	}
	var order []string
	for _, raw := range acc {
		var a map[string]json.RawMessage
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		keys := []string{}
		for k := range a {
			keys = append(keys, k)
		}
		for _, k := range []string{"ticket", "attempt", "base", "candidate", "review", "verification", "writerModel", "reviewModel"} {
			if _, ok := a[k]; !ok {
				t.Errorf("ticket.accepted lacks %s: %s", k, raw)
			}
		}
		if len(a) != 8 {
			t.Errorf("ticket.accepted has keys %v", keys)
		}
		var b TicketAccepted
		if err := strictDecode(raw, &b); err != nil {
			t.Fatal(err)
		}
		order = append(order, fmt.Sprintf("%s@%d", b.Ticket, b.Attempt))
		if b.WriterModel == b.ReviewModel || b.Candidate.Digest == "" || b.Review.Path == "" || b.Verification.Path == "" {
			t.Errorf("accepted = %+v", b)
		}
		head, err := git(rep.Project, "rev-parse", b.Candidate.Head+"^{commit}")
		if err != nil || strings.TrimSpace(head) != b.Candidate.Head {
			t.Errorf("accepted commit %s: %v", b.Candidate.Head, err)
		}
	}
	if strings.Join(order, " ") != "t1@2 t2@1" {
		t.Fatalf("accepted in order %v, want t1@2 then t2@1", order)
	}
	// The second writer attempt of t1 got the blocking review as an input artifact.
	var retried bool
	for _, w := range writers {
		if strings.Contains(w, "ticket t1, attempt 2.") {
			retried = true
			if !strings.Contains(w, "Add has no test.") {
				t.Error("t1's second writer request lacks the review finding")
			}
		}
	}
	if !retried || len(reviews) < 3 {
		t.Fatalf("writer requests %d (retried %t), review requests %d", len(writers), retried, len(reviews))
	}
	if !strings.Contains(strings.Join(writers, ""), writerCanary) {
		t.Fatal("the spy never sees the canary in the writers' own requests")
	}
	for i, rv := range reviews {
		if strings.Contains(rv, writerCanary) {
			t.Fatalf("review request %d carries the writer's canary", i)
		}
		if !strings.Contains(rv, ReviewIsolation) {
			t.Fatalf("review request %d lacks the isolation statement", i)
		}
	}
	if data, err := os.ReadFile(filepath.Join(env.Home, "runs", id, ledger.FileName)); err != nil || strings.Contains(string(data), writerCanary) {
		t.Fatalf("the run ledger holds the canary (or is unreadable: %v)", err)
	}
	// Each ticket's worktree is under $REIN_HOME/worktrees/<run>/<ticket>, at its candidate.
	for _, tk := range []string{"t1", "t2"} {
		if _, err := os.Stat(filepath.Join(env.Home, "worktrees", id, tk, ".git")); err != nil {
			t.Errorf("worktree of %s: %v", tk, err)
		}
	}
	// Status shows each ticket accepted.
	if len(rep.Tickets) != 2 || rep.Tickets[0].State != "accepted" {
		t.Fatalf("status tickets = %+v", rep.Tickets)
	}
	checkT2StackedOnT1(t, env, id, reviews)
}

// checkT2StackedOnT1: t2 (dependsOn t1) started from t1's accepted candidate, recorded in
// ticket.start; its worktree holds t1's add.go (its Sub calls Add, and go test passed in it);
// its candidate, and the diff its review saw, are only its own change.
func checkT2StackedOnT1(t *testing.T, env Env, id string, reviews []string) {
	t.Helper()
	acc := map[string]TicketAccepted{}
	for _, raw := range ticketRecords(t, env, id, KindTicketAccepted) {
		var a TicketAccepted
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		acc[a.Ticket] = a
	}
	starts := map[string]TicketStart{}
	for _, raw := range ticketRecords(t, env, id, KindTicketStart) {
		var s TicketStart
		if err := strictDecode(raw, &s); err != nil {
			t.Fatal(err)
		}
		if _, dup := starts[s.Ticket]; dup {
			t.Fatalf("two ticket.start records for %s", s.Ticket)
		}
		starts[s.Ticket] = s
	}
	t1, t2 := acc["t1"], acc["t2"]
	if s := starts["t1"]; s.Start != t1.Base || s.Base != t1.Base || len(s.DependsOn) != 0 {
		t.Errorf("t1's start = %+v, want the run's base %s", s, t1.Base)
	}
	if s := starts["t2"]; s.Start != t1.Candidate.Head || s.Base != t1.Base || len(s.DependsOn) != 1 || s.DependsOn[0] != (StartDep{Ticket: "t1", Commit: t1.Candidate.Head}) {
		t.Errorf("t2's start = %+v, want t1's accepted candidate %s", s, t1.Candidate.Head)
	}
	if t2.Base != t1.Candidate.Head {
		t.Fatalf("t2 was accepted from base %s, not t1's candidate %s", t2.Base, t1.Candidate.Head)
	}
	wt2 := filepath.Join(env.Home, "worktrees", id, "t2")
	if data, err := os.ReadFile(filepath.Join(wt2, "add.go")); err != nil || !strings.Contains(string(data), "func Add") {
		t.Errorf("t2's worktree lacks t1's add.go: %v", err)
	}
	var c2 CandidateRecord
	for _, raw := range ticketRecords(t, env, id, KindTicketCandidate) {
		if err := json.Unmarshal(raw, &c2); err != nil {
			t.Fatal(err)
		}
	}
	if c2.Ticket != "t2" || strings.Join(c2.Files, ",") != "sub.go" || c2.Base != t1.Candidate.Head || c2.Parent != t1.Candidate.Head {
		t.Errorf("t2's candidate = %+v, want only sub.go over t1's candidate", c2)
	}
	seen := false
	for _, rv := range reviews {
		if !strings.Contains(rv, "ticket t2, review attempt") {
			continue
		}
		seen = true
		if strings.Contains(rv, "b/add.go") || strings.Contains(rv, "b/add_test.go") || !strings.Contains(rv, "b/sub.go") {
			t.Errorf("t2's review diff is not t2's own change")
		}
		if !strings.Contains(rv, "the accepted work of t1") {
			t.Errorf("t2's review request does not say its base holds t1's accepted work")
		}
	}
	if !seen {
		t.Error("no review request of t2")
	}
}

func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// TestTicketBudgetInsufficient: a writer budget too small for the plan's two tickets blocks
// before any ticket starts.
func TestTicketBudgetInsufficient(t *testing.T) {
	tm := &ticketModels{}
	env, id := startTicketRun(t, tm, func(p *Profile) {
		m := p.Models[RoleWriter]
		m.Budget.ModelTurns = 3 // the workflow stages do not use it; two tickets need 4
		p.Models[RoleWriter] = m
	})
	_, err := Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || be.Blockers[0].Code != "run_budget_insufficient" {
		t.Fatalf("Next = %v, want run_budget_insufficient", err)
	}
	if !strings.Contains(be.Blockers[0].Detail, "writer: 2 attempt(s) need 4 model turns") {
		t.Errorf("detail = %s", be.Blockers[0].Detail)
	}
	if n := len(ticketRecords(t, env, id, KindTicketWriterStarted)); n != 0 {
		t.Fatalf("%d writer attempts started", n)
	}
	if _, err := os.Stat(filepath.Join(env.Home, "worktrees", id)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a worktree was made: %v", err)
	}
}

// ticketStatusText is the run's status as `rein run status` writes it, for failure messages.
func ticketStatusText(env Env, id string) string {
	rep, err := Status(env, id)
	if rep == nil {
		return err.Error()
	}
	var b strings.Builder
	rep.WriteText(&b)
	return b.String()
}
