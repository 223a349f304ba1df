package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// parallelPlan answers Research and Specification (one requirement per ticket) and plans
// the tickets given as YAML flow maps.
func parallelPlan(tickets ...string) string {
	var items, plan strings.Builder
	for i := range tickets {
		kind := "requirement"
		if i == len(tickets)-1 {
			kind = "acceptance" // a specification needs one
		}
		fmt.Fprintf(&items, "                    - {id: r%d, kind: %s, statement: Function F%d returns %d.}\n", i+1, kind, i+1, i+1)
	}
	for _, tk := range tickets {
		fmt.Fprintf(&plan, "                - %s\n", tk)
	}
	return `version: 1
dialogs:
  - match: 'stage research,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              stage: research
              establishedEvidence: [{id: e1, statement: The requirement asks for functions., references: [requirement]}]
              remainingUnknowns: []
              requiredEvidenceUnavailable: []
              clarificationQuestions: []
      - text: Submitted.
  - match: 'stage specification,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              title: Functions
              sections:
                - id: s1
                  title: Scope
                  body: One function per ticket.
                  items:
` + items.String() + `              inputReferences: [requirement, research]
      - text: Submitted.
  - match: 'stage ticket-planning,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              tickets:
` + plan.String() + `      - text: Submitted.
`
}

// fileWriter is the writer dialog of ticket tN: it writes fN.go (and, with extra, a second
// file first, so that the candidate is submitted at turn 3), submits and ends; every turn
// reports 100 input and 10 output tokens.
func fileWriter(n int, extra bool) string {
	s := fmt.Sprintf("  - match: 'ticket t%d, attempt [0-9]+\\.'\n    turns:\n", n)
	if extra {
		s += fmt.Sprintf("      - usage: {input: 100, output: 10}\n        calls:\n          - name: write\n            args: {path: doc%d.go, content: \"// Package x holds F%d.\\npackage x\\n\"}\n", n, n)
	}
	s += fmt.Sprintf(`      - text: writing F%[1]d.
        usage: {input: 100, output: 10}
        calls:
          - name: write
            args: {path: f%[1]d.go, content: "package x\n\n// F%[1]d returns %[1]d.\nfunc F%[1]d() int { return %[1]d }\n"}
      - usage: {input: 100, output: 10}
        calls:
          - name: rein_ticket_candidate
            args: {ticketId: t%[1]d, summary: Adds F%[1]d.}
      - text: Done.
        usage: {input: 100, output: 10}
`, n)
	return s
}

// overlap holds the first model request of attempt 1 of each writer in want until every
// one of them has arrived: the requests of those sessions are all in flight at once, or
// none of them is answered — evidence that the tickets run at the same time, which a
// sequential loop can never produce. onAll runs once when the last one arrives.
type overlap struct {
	mu    sync.Mutex
	want  map[string]bool
	seen  map[string]bool
	all   chan struct{}
	onAll func()
	// hold keeps the released requests until their context ends (the crash tests).
	hold bool
}

func newOverlap(tickets ...string) *overlap {
	o := &overlap{want: map[string]bool{}, seen: map[string]bool{}, all: make(chan struct{})}
	for _, t := range tickets {
		o.want[t] = true
	}
	return o
}

var writerAttemptLine = regexp.MustCompile(`ticket (t[0-9]+), attempt ([0-9]+)\.`)

// arrive blocks the first request of ticket's first writer attempt until every writer in
// want sent its own; false when the others never came (the deadlock guard) or ctx ended.
func (o *overlap) arrive(ctx context.Context, ticket string) bool {
	o.mu.Lock()
	if !o.want[ticket] || o.seen[ticket] {
		o.mu.Unlock()
		return true
	}
	o.seen[ticket] = true
	last := len(o.seen) == len(o.want)
	o.mu.Unlock()
	if last {
		if o.onAll != nil {
			o.onAll()
		}
		close(o.all)
	}
	select {
	case <-o.all:
	case <-ctx.Done():
		return false
	case <-time.After(2 * time.Minute):
		return false
	}
	if o.hold {
		<-ctx.Done()
		return false
	}
	return ctx.Err() == nil
}

// overlapped reports whether every writer in want was in flight at once.
func (o *overlap) overlapped() bool {
	select {
	case <-o.all:
		return true
	default:
		return false
	}
}

// parallelModels answers every role from plan and writers (one script per session), reviews
// accepting; the overlap barrier holds the writers' first requests.
type parallelModels struct {
	plan, writers string
	overlap       *overlap
	failed        sync.Map // ticket → the barrier failed for it
}

func (pm *parallelModels) model(string, ModelPolicy) (llm.Model, error) {
	m, err := script.Parse([]byte(pm.plan+pm.writers), "scenario.yaml")
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
		if strings.HasPrefix(first, "Ticket review request") {
			rm, err := script.Parse([]byte(reviewAnswer(first, nil)), "review.yaml")
			if err != nil {
				panic(err)
			}
			return rm.Stream(ctx, req, emit)
		}
		if w := writerAttemptLine.FindStringSubmatch(first); strings.HasPrefix(first, "Ticket writer request") && w != nil && w[2] == "1" && len(req.Messages) == 1 && pm.overlap != nil {
			if !pm.overlap.arrive(ctx, w[1]) && ctx.Err() == nil {
				pm.failed.Store(w[1], true)
				return &llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError,
					Err: &llm.Error{Kind: llm.KindInvalid, Message: "the other tickets' writer requests never arrived while this one was in flight"}}
			}
		}
		return m.Stream(ctx, req, emit)
	}), nil
}

// startParallelRun starts a run whose plan holds tickets and takes it to the approved Ticket
// Plan Gate, with Parallel n.
func startParallelRun(t *testing.T, pm *parallelModels, n int, edit func(*Profile)) (Env, string) {
	t.Helper()
	env, id := startRunWith(t, edit)
	env.Agents = testAgents(env.Home, pm.model)
	advanceTo(t, env, id, StageTicketPlanGate, nil)
	approveOpenGate(t, env, id, GateTicketPlan)
	env.Parallel = n
	return env, id
}

// seqOf returns the sequence numbers of the run ledger's records of kind naming ticket.
func seqOf(t *testing.T, env Env, id, kind, ticket string) []int64 {
	t.Helper()
	var out []int64
	for rec, err := range mustReadLedger(t, runDir(env.Home, id)) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == kind && strings.Contains(string(rec.Body), `"ticket":"`+ticket+`"`) {
			out = append(out, rec.Seq)
		}
	}
	return out
}

// TestParallelTicketsOverlap: three independent tickets with --parallel 2 are cut into the
// batches [t1 t2] [t3]; t1's and t2's writers are in flight at the same time (each one's
// first request is answered only once the other's arrived), t3 starts only after both are
// accepted, and every ticket is accepted once.
func TestParallelTicketsOverlap(t *testing.T) {
	pm := &parallelModels{plan: parallelPlan("{id: t1, title: F1, specItemIds: [r1], dependsOn: []}",
		"{id: t2, title: F2, specItemIds: [r2], dependsOn: []}", "{id: t3, title: F3, specItemIds: [r3], dependsOn: []}"),
		writers: fileWriter(1, false) + fileWriter(2, false) + fileWriter(3, false), overlap: newOverlap("t1", "t2")}
	env, id := startParallelRun(t, pm, 2, nil)
	stage, err := Next(context.Background(), env, id)
	if err != nil {
		t.Fatalf("Next = %s, %v\n%s", stage, err, ticketStatusText(env, id))
	}
	if !pm.overlap.overlapped() {
		t.Fatal("t1's and t2's writers never had requests in flight at the same time")
	}
	var s TicketSchedule
	if err := strictDecode(ticketRecords(t, env, id, KindTicketScheduled)[0], &s); err != nil || s.Parallel != 2 || fmt.Sprint(s.Batches) != "[[t1 t2] [t3]]" {
		t.Fatalf("schedule = %+v, %v", s, err)
	}
	// The run ledger shows it too: both writers started before either settled.
	for _, a := range []string{"t1", "t2"} {
		for _, b := range []string{"t1", "t2"} {
			if seqOf(t, env, id, KindTicketWriterStarted, a)[0] > seqOf(t, env, id, KindTicketWriterAttempt, b)[0] {
				t.Errorf("%s's writer started after %s's settled", a, b)
			}
		}
	}
	t3 := seqOf(t, env, id, KindTicketWriterStarted, "t3")[0]
	for _, tk := range []string{"t1", "t2"} {
		if acc := seqOf(t, env, id, KindTicketAccepted, tk); len(acc) != 1 || acc[0] > t3 {
			t.Errorf("t3 started (seq %d) before %s was accepted (%v)", t3, tk, acc)
		}
	}
	rep, err := Status(env, id)
	if err != nil || rep.Stage != "manual-integration" {
		t.Fatalf("status = %s, %v", rep.Stage, err)
	}
	var order []string
	for _, tr := range rep.Tickets {
		order = append(order, tr.Ticket+":"+tr.State)
	}
	if strings.Join(order, " ") != "t1:accepted t2:accepted t3:accepted" {
		t.Fatalf("tickets %v", order)
	}
	checkTicketMetrics(t, env, id, map[string]string{"t1": "accepted", "t2": "accepted", "t3": "accepted"})
}

// writerTurns sums the model turns of the recorded writer attempts.
func writerTurns(t *testing.T, env Env, id string) (turns int, attempts []TicketAttempt) {
	t.Helper()
	for _, raw := range ticketRecords(t, env, id, KindTicketWriterAttempt) {
		var a TicketAttempt
		if err := strictDecode(raw, &a); err != nil {
			t.Fatal(err)
		}
		turns += a.Turns
		attempts = append(attempts, a)
	}
	return turns, attempts
}

// TestParallelBudgetShared: two tickets' writers in flight at the same time reserve their
// model turns from the one writer budget. A budget of exactly the turns both need delivers
// both. A budget of 5 pays for one writer's candidate (turn 3) but never for both (6): it is
// never overspent — a turn the budget cannot pay for does not start, so one writer attempt
// ends budget_exhausted before its candidate, its ticket is blocked (run_budget_exhausted),
// and the other ticket is still accepted. Each session alone could have used 5 turns.
func TestParallelBudgetShared(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int
	}{{"covers-the-sum", 8}, {"short", 5}} {
		t.Run(tc.name, func(t *testing.T) {
			pm := &parallelModels{plan: parallelPlan("{id: t1, title: F1, specItemIds: [r1], dependsOn: []}", "{id: t2, title: F2, specItemIds: [r2], dependsOn: []}"),
				writers: fileWriter(1, true) + fileWriter(2, true), overlap: newOverlap("t1", "t2")}
			env, id := startParallelRun(t, pm, 2, func(p *Profile) {
				m := p.Models[RoleWriter]
				m.Budget.ModelTurns = tc.budget // each writer needs 4 turns; the fan-out check 2 each
				p.Models[RoleWriter] = m
			})
			_, err := Next(context.Background(), env, id)
			if !pm.overlap.overlapped() {
				t.Fatal("the writers never had requests in flight at the same time")
			}
			turns, attempts := writerTurns(t, env, id)
			if turns > tc.budget {
				t.Fatalf("the writers used %d model turns of a budget of %d: %+v", turns, tc.budget, attempts)
			}
			accepted := len(ticketRecords(t, env, id, KindTicketAccepted))
			if tc.budget == 8 {
				if err != nil || accepted != 2 || turns != 8 {
					t.Fatalf("Next = %v; %d accepted, %d turns\n%s", err, accepted, turns, ticketStatusText(env, id))
				}
				return
			}
			var be *BlockedError
			if !errors.As(err, &be) || be.Blockers[0].Code != BlockBudgetExhausted {
				t.Fatalf("Next = %v, want %s\n%s", err, BlockBudgetExhausted, ticketStatusText(env, id))
			}
			exhausted := 0
			for _, a := range attempts {
				if c := a.FailureCause(); c != nil && c.Code == CauseBudgetExhausted && c.Budget == "turns" {
					exhausted++
				}
			}
			if accepted != 1 || exhausted != 1 || turns != tc.budget {
				t.Fatalf("%d accepted, %d writer attempts budget_exhausted, %d turns: %+v", accepted, exhausted, turns, attempts)
			}
		})
	}
}

// TestParallelOneBlockedOneAccepted: t2's writer never submits a candidate and uses its three
// attempts (run_ticket_failed) while t1, running beside it, is reviewed, verified and
// accepted: the run stops with t2's blocker and keeps t1's acceptance; status and metrics
// show each ticket's state.
func TestParallelOneBlockedOneAccepted(t *testing.T) {
	giveUp := "  - match: 'ticket t2, attempt [0-9]+\\.'\n    turns:\n      - text: I cannot do this.\n        usage: {input: 50, output: 5}\n"
	pm := &parallelModels{plan: parallelPlan("{id: t1, title: F1, specItemIds: [r1], dependsOn: []}", "{id: t2, title: F2, specItemIds: [r2], dependsOn: []}"),
		writers: fileWriter(1, false) + giveUp, overlap: newOverlap("t1", "t2")}
	env, id := startParallelRun(t, pm, 2, nil)
	_, err := Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Blockers) != 1 || be.Blockers[0].Code != BlockTicketFailed || be.Blockers[0].Ticket != "t2" {
		t.Fatalf("Next = %v, want %s for t2", err, BlockTicketFailed)
	}
	if !pm.overlap.overlapped() {
		t.Fatal("the writers never had requests in flight at the same time")
	}
	if n := len(seqOf(t, env, id, KindTicketAccepted, "t1")); n != 1 {
		t.Fatalf("t1 accepted %d times", n)
	}
	if n := len(seqOf(t, env, id, KindTicketWriterAttempt, "t2")); n != MaxTicketAttempts {
		t.Fatalf("t2 had %d writer attempts", n)
	}
	rep, _ := Status(env, id)
	if rep == nil || len(rep.Tickets) != 2 || rep.Tickets[0].State != "accepted" || rep.Tickets[1].State != "blocked" {
		t.Fatalf("status tickets = %+v", rep)
	}
	if s := rep.Tickets[1].TicketSummary; s.Attempts != MaxTicketAttempts || len(s.WriterModels) != 1 || len(s.ReviewModels) != 0 || s.Verification.Last != "" {
		t.Errorf("t2's summary = %+v", s)
	}
	if s := rep.Tickets[0].TicketSummary; s.Attempts != 1 || len(s.ReviewModels) != 1 || s.ReviewModels[0] == s.WriterModels[0] || s.Verification != (VerificationCounts{Passed: 1, Last: "passed"}) {
		t.Errorf("t1's summary = %+v", s)
	}
	checkTicketMetrics(t, env, id, map[string]string{"t1": "accepted", "t2": "blocked"})
}

// checkTicketMetrics recomputes each ticket's numbers from the run ledger's ticket records
// and compares them with `rein run metrics` (and its text).
func checkTicketMetrics(t *testing.T, env Env, id string, states map[string]string) {
	t.Helper()
	m, err := RunMetrics(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tickets) != len(states) {
		t.Fatalf("metrics tickets = %+v", m.Tickets)
	}
	var roleTurns [2]int
	for _, tm := range m.Tickets {
		var want [2]Counts
		var blocking, advisory, passed, failed int
		for i, kind := range []string{KindTicketWriterAttempt, KindTicketReviewAttempt} {
			for _, raw := range ticketRecordsOf(t, env, id, kind, tm.Ticket) {
				var a TicketAttempt
				if err := strictDecode(raw, &a); err != nil {
					t.Fatal(err)
				}
				want[i].Attempts++
				want[i].Turns += a.Turns
				want[i].InputTokens += a.InputTokens
				want[i].OutputTokens += a.OutputTokens
				want[i].ElapsedMs += a.ElapsedMs
				if a.Outcome == "accepted" {
					blocking, advisory = blocking+a.Blocking, advisory+a.Advisory
				}
			}
		}
		for _, raw := range ticketRecordsOf(t, env, id, KindTicketVerification, tm.Ticket) {
			var v TicketVerification
			if err := strictDecode(raw, &v); err != nil {
				t.Fatal(err)
			}
			if v.Passed {
				passed++
			} else {
				failed++
			}
		}
		for i, got := range []Counts{tm.Writer, tm.Review} {
			w := want[i]
			if got.Attempts != w.Attempts || got.Turns != w.Turns || got.InputTokens != w.InputTokens || got.OutputTokens != w.OutputTokens || got.ElapsedMs != w.ElapsedMs {
				t.Errorf("ticket %s role %d: metrics %+v, ledger %+v", tm.Ticket, i, got, w)
			}
			roleTurns[i] += got.Turns
		}
		if tm.Tokens != want[0].InputTokens+want[0].OutputTokens+want[1].InputTokens+want[1].OutputTokens || tm.Writer.InputTokens == 0 {
			t.Errorf("ticket %s: tokens %d, ledger %+v", tm.Ticket, tm.Tokens, want)
		}
		if tm.State != states[tm.Ticket] || tm.Findings != (Findings{blocking, advisory}) || tm.Verification.Passed != passed || tm.Verification.Failed != failed || tm.Attempts != want[0].Attempts {
			t.Errorf("ticket %s: metrics %+v", tm.Ticket, tm)
		}
	}
	for _, rm := range m.Roles {
		if rm.Role == RoleWriter && rm.Turns != roleTurns[0] || rm.Role == RoleReview && rm.Turns != roleTurns[1] {
			t.Errorf("role %s: %d turns, its tickets' %v", rm.Role, rm.Turns, roleTurns)
		}
	}
	var b strings.Builder
	m.WriteText(&b)
	for tk, st := range states {
		if !strings.Contains(b.String(), "ticket: "+tk+" "+st+",") {
			t.Errorf("metrics text lacks ticket %s %s:\n%s", tk, st, b.String())
		}
	}
}

// twoIndependent are two tickets of one batch, each writing its own file.
func twoIndependent(o *overlap) *parallelModels {
	return &parallelModels{plan: parallelPlan("{id: t1, title: F1, specItemIds: [r1], dependsOn: []}", "{id: t2, title: F2, specItemIds: [r2], dependsOn: []}"),
		writers: fileWriter(1, false) + fileWriter(2, false), overlap: o}
}

// TestParallelCrashChild runs Next with --parallel 2 on a run at the ticket stages; once both
// writers' first requests are in flight it writes REIN_PARALLEL_MARK and holds them until
// its context ends: SIGTERM cancels it (Next returns), SIGKILL ends the process there.
func TestParallelCrashChild(t *testing.T) {
	home := os.Getenv("REIN_PARALLEL_HOME")
	if home == "" {
		t.Skip("runs only as the parallel crash tests' child process")
	}
	o := newOverlap("t1", "t2")
	env := crashEnv(home)
	if at := os.Getenv("REIN_PARALLEL_AT"); at != "" {
		env = installCrash(env, at)
	} else {
		o.hold = true
		o.onAll = func() {
			if err := os.WriteFile(os.Getenv("REIN_PARALLEL_MARK"), []byte("both writers in flight"), 0o644); err != nil {
				panic(err)
			}
		}
	}
	env.Agents = testAgents(home, twoIndependent(o).model)
	env.Parallel = 2
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	_, err := Next(ctx, env, os.Getenv("REIN_PARALLEL_ID"))
	if err == nil || ctx.Err() == nil {
		t.Fatalf("Next = %v before any signal", err)
	}
	t.Logf("Next after SIGTERM: %v", err)
}

// TestParallelResumeAfterSignal stops a process while two tickets' writers run at the same
// time — SIGKILL, or SIGTERM (which cancels both sessions: the process ends by itself) — and
// resumes with another process: what the first recorded is kept (its ledger is a prefix of
// the resumed one), both leases are reclaimed on evidence, both writer attempts settle as
// interrupted, no ticket ever has two writers at once, and both tickets are accepted once.
func TestParallelResumeAfterSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			env, id := startParallelRun(t, twoIndependent(nil), 2, nil)
			mark := filepath.Join(t.TempDir(), "mark")
			cmd := exec.Command(os.Args[0], "-test.run=^TestParallelCrashChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "REIN_PARALLEL_HOME="+env.Home, "REIN_PARALLEL_ID="+id, "REIN_PARALLEL_MARK="+mark)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			for i := 0; ; i++ {
				if _, err := os.Stat(mark); err == nil {
					break
				}
				if i > 1200 {
					t.Fatalf("the child never had both writers in flight\n%s", out.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if sig == syscall.SIGTERM && err != nil {
				t.Fatalf("the child did not end by itself after SIGTERM: %v\n%s", err, out.String())
			}
			for _, tk := range []string{"t1", "t2"} {
				if s, a := seqOf(t, env, id, KindTicketWriterStarted, tk), seqOf(t, env, id, KindTicketWriterAttempt, tk); len(s) != 1 || len(a) != 0 {
					t.Fatalf("after %s: ticket %s has %d writer(s) started, %d settled", sig, tk, len(s), len(a))
				}
			}
			ledgerPath := filepath.Join(runDir(env.Home, id), ledger.FileName)
			before, _ := os.ReadFile(ledgerPath)
			env.Parallel = 0 // rein run resume: the schedule's N
			if _, err := Resume(context.Background(), env, id); err != nil {
				t.Fatalf("Resume: %v\n%s", err, ticketStatusText(env, id))
			}
			if after, _ := os.ReadFile(ledgerPath); !bytes.HasPrefix(after, before) {
				t.Fatal("resume lost or rewrote what the stopped process recorded")
			}
			checkOneWriterAtATime(t, env, id)
			for _, tk := range []string{"t1", "t2"} {
				if n := len(seqOf(t, env, id, KindTicketLeaseReclaimed, tk)); n != 1 {
					t.Errorf("ticket %s's lease reclaimed %d times", tk, n)
				}
				var first TicketAttempt
				if err := strictDecode(ticketRecordsOf(t, env, id, KindTicketWriterAttempt, tk)[0], &first); err != nil || first.Outcome != "failed" || first.Reason != ReasonInterrupted {
					t.Errorf("ticket %s's stopped writer attempt = %+v, %v", tk, first, err)
				}
			}
			checkTicketsOnce(t, env, id)
		})
	}
}

// TestParallelCrashMatrix SIGKILLs a process running two tickets at the same time at points
// of one ticket's stages (whichever ticket reaches the point first; the other is wherever it
// is) and resumes until the run reaches Manual Integration: every ticket accepted once, no
// candidate commit made twice, never two writers on one ticket, settling again changes
// nothing.
func TestParallelCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, at := range []string{"hook:ticket-intent", "hook:ticket-frozen", "hook:ticket-candidate", "hook:ticket-review-artifact", "hook:ticket-verification-artifact"} {
		t.Run(strings.ReplaceAll(at, ":", "_"), func(t *testing.T) {
			env, id := startParallelRun(t, twoIndependent(nil), 2, nil)
			cmd := exec.Command(os.Args[0], "-test.run=^TestParallelCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "REIN_PARALLEL_HOME="+env.Home, "REIN_PARALLEL_ID="+id, "REIN_PARALLEL_AT="+at)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("child was not killed at %s: %v\n%s", at, err, out)
			}
			env.Parallel = 0
			for range 3 {
				if rep, _ := Status(env, id); rep != nil && rep.Stage == "manual-integration" {
					break
				}
				if _, err := Resume(context.Background(), env, id); err != nil {
					t.Fatalf("Resume: %v\n%s", err, ticketStatusText(env, id))
				}
			}
			if rep, err := Status(env, id); err != nil || rep.Stage != "manual-integration" {
				t.Fatalf("stage %v, %v\n%s", rep.Stage, err, ticketStatusText(env, id))
			}
			checkOneWriterAtATime(t, env, id)
			checkTicketsOnce(t, env, id)
		})
	}
}

// ticketRecordsOf returns the bodies of the run ledger's records of kind naming ticket.
func ticketRecordsOf(t *testing.T, env Env, id, kind, ticket string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, raw := range ticketRecords(t, env, id, kind) {
		if strings.Contains(string(raw), `"ticket":"`+ticket+`"`) {
			out = append(out, raw)
		}
	}
	return out
}

// checkOneWriterAtATime reads the run ledger in order: a ticket's writer starts only when its
// previous one settled, and its lease is taken only when the last one was released or
// reclaimed.
func checkOneWriterAtATime(t *testing.T, env Env, id string) {
	t.Helper()
	writer, leased := map[string]bool{}, map[string]bool{}
	for rec, err := range mustReadLedger(t, runDir(env.Home, id)) {
		if err != nil {
			t.Fatal(err)
		}
		var b struct {
			Ticket string `json:"ticket"`
		}
		if !strings.HasPrefix(rec.Kind, "ticket.") || json.Unmarshal(rec.Body, &b) != nil {
			continue
		}
		switch rec.Kind {
		case KindTicketWriterStarted:
			if writer[b.Ticket] {
				t.Fatalf("seq %d: a second writer of ticket %s started while one was open", rec.Seq, b.Ticket)
			}
			writer[b.Ticket] = true
		case KindTicketWriterAttempt:
			writer[b.Ticket] = false
		case KindTicketLease:
			if leased[b.Ticket] {
				t.Fatalf("seq %d: ticket %s leased while its lease was held", rec.Seq, b.Ticket)
			}
			leased[b.Ticket] = true
		case KindTicketLeaseReleased, KindTicketLeaseReclaimed:
			leased[b.Ticket] = false
		}
	}
}
