package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
)

// TestTicketCrashChild runs Next on a run at the ticket stages and SIGKILLs itself at
// REIN_TICKET_CRASH_AT (hook:NAME or write:N[:after], as installCrash), or, with
// hang:NAME, writes REIN_TICKET_CRASH_MARK at the hook and waits to be killed.
func TestTicketCrashChild(t *testing.T) {
	at := os.Getenv("REIN_TICKET_CRASH_AT")
	if at == "" {
		t.Skip("runs only as the ticket crash tests' child process")
	}
	tm := &ticketModels{extraWriter: crashWriter}
	env := crashEnv(os.Getenv("REIN_RUN_CRASH_HOME"))
	env.Agents = testAgents(env.Home, tm.model)
	if name, ok := strings.CutPrefix(at, "hang:"); ok {
		env.Crash = func(p string) {
			if p == name {
				if err := os.WriteFile(os.Getenv("REIN_TICKET_CRASH_MARK"), []byte("here"), 0o644); err != nil {
					panic(err)
				}
				time.Sleep(time.Minute)
			}
		}
	} else {
		env = installCrash(env, at)
	}
	if _, err := Next(context.Background(), env, os.Getenv("REIN_RUN_CRASH_ID")); err != nil {
		t.Fatal(err)
	}
}

// crashWriter: a retry of t1 after a crash does the whole ticket (a crash may have come before
// the first attempt wrote anything).
const crashWriter = `
  - match: 'ticket t1, attempt [2-9]\.'
    turns:
      - calls:
          - name: write
            args: {path: add.go, content: "package x\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n"}
      - calls:
          - name: rein_ticket_candidate
            args: {ticketId: t1, summary: Adds Add.}
      - text: Done.
`

func ticketChild(env Env, id, at string, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestTicketCrashChild$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "REIN_RUN_CRASH_HOME="+env.Home, "REIN_RUN_CRASH_ID="+id, "REIN_TICKET_CRASH_AT="+at), extra...)
	return cmd
}

// TestTicketLeaseConflictAndReclaim: while a writer runs in another process, a second Next is
// refused (the run's lease, and — with the run lease file gone — the ticket's lease: never
// two writers on one ticket); after that process is SIGKILLed, Next reclaims both, records the
// reclaim with its evidence, settles the writer attempt as interrupted and delivers.
func TestTicketLeaseConflictAndReclaim(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	tm := &ticketModels{extraWriter: crashWriter}
	env, id := startTicketRun(t, tm, nil)
	mark := filepath.Join(t.TempDir(), "mark")
	cmd := ticketChild(env, id, "hang:ticket-session", "REIN_TICKET_CRASH_MARK="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for i := 0; ; i++ {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if i > 600 {
			t.Fatal("the child never reached its writer session")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrRunning) {
		t.Fatalf("Next beside a live writer = %v, want ErrRunning", err)
	}
	// Without the run's lease file the run ledger's lock still refuses.
	if err := os.Remove(filepath.Join(env.Home, "runs", id, LeaseFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ledger.ErrLocked) {
		t.Fatalf("Next beside a live run ledger = %v, want ledger.ErrLocked", err)
	}
	// And the ticket's own lease refuses while its owner lives.
	var lease ticketLeaseBody
	if err := json.Unmarshal(ticketRecords(t, env, id, KindTicketLease)[0], &lease); err != nil || lease.PID != cmd.Process.Pid || lease.StartTime == "" {
		t.Fatalf("ticket lease = %+v, %v", lease, err)
	}
	if err := (&Run{ID: id}).reclaimTicketLease(nil, &ticketRun{ID: "t1", Lease: &lease}); !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), "ticket t1") {
		t.Fatalf("reclaim of a live ticket lease = %v, want ErrRunning naming ticket t1", err)
	}
	if n := len(ticketRecords(t, env, id, KindTicketWriterStarted)); n != 1 {
		t.Fatalf("%d writer attempts started, want 1", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("Next after the kill: %v\n%s", err, ticketStatusText(env, id))
	}
	rec := ticketRecords(t, env, id, KindTicketLeaseReclaimed)
	if len(rec) != 1 {
		t.Fatalf("%d reclaims", len(rec))
	}
	var b ticketLeaseBody
	if err := json.Unmarshal(rec[0], &b); err != nil || b.Ticket != "t1" || b.PID != cmd.Process.Pid || !strings.Contains(b.Evidence, strconv.Itoa(b.PID)) {
		t.Fatalf("reclaim = %+v, %v", b, err)
	}
	var first TicketAttempt
	if err := json.Unmarshal(ticketRecords(t, env, id, KindTicketWriterAttempt)[0], &first); err != nil {
		t.Fatal(err)
	}
	if first.Outcome != "failed" || first.Reason != ReasonInterrupted {
		t.Fatalf("the killed writer attempt = %+v", first)
	}
	if n := len(ticketRecords(t, env, id, KindTicketAccepted)); n != 2 {
		t.Fatalf("%d tickets accepted", n)
	}
}

// TestTicketLeaseOtherHost: a ticket lease of another host is never reclaimed.
func TestTicketLeaseOtherHost(t *testing.T) {
	r := &Run{ID: "r1"}
	tr := &ticketRun{ID: "t1", Lease: &ticketLeaseBody{Ticket: "t1", Lease: Lease{PID: 1, Host: "elsewhere.invalid"}, SessionID: "s"}}
	err := r.reclaimTicketLease(nil, tr)
	var be *BlockedError
	if !errors.As(err, &be) || be.Blockers[0].Code != BlockTicketLeaseHeld || tr.Lease == nil {
		t.Fatalf("reclaim = %v, lease %+v", err, tr.Lease)
	}
}

// TestResumeAfterCrashTickets SIGKILLs Next at points inside the ticket stages — in the
// writer's session, between its freeze intent and commit, after the commit, after the
// candidate record, in the review, after the verification artifact, after a ticket's
// ticket.start record and before its worktree (t1's; t2's, just after t1's acceptance) — then
// resumes until the
// run reaches Manual Integration: every ticket is accepted once, no candidate commit is made
// twice (each worktree holds exactly its recorded candidates' commits), and settling again
// changes nothing. -rein.crash.all adds every session write point.
func TestResumeAfterCrashTickets(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	points := []string{"hook:ticket-session", "write:3", "hook:ticket-intent", "hook:ticket-frozen", "hook:ticket-candidate",
		"hook:ticket-review-artifact", "hook:ticket-verification-artifact", "hook:ticket-start-t1", "hook:ticket-start-t2"}
	if *crashAllPoints {
		for n := 1; n <= 12; n++ {
			points = append(points, "write:"+strconv.Itoa(n), "write:"+strconv.Itoa(n)+":after")
		}
	}
	for _, at := range points {
		t.Run(strings.ReplaceAll(at, ":", "_"), func(t *testing.T) {
			tm := &ticketModels{extraWriter: crashWriter}
			env, id := startTicketRun(t, tm, nil)
			out, err := ticketChild(env, id, at).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("child was not killed at %s: %v\n%s", at, err, out)
			}
			for range 3 {
				if rep, _ := Status(env, id); rep != nil && rep.Stage == "manual-integration" {
					break
				}
				if _, err := Resume(context.Background(), env, id); err != nil {
					t.Fatalf("Resume: %v\n%s", err, ticketStatusText(env, id))
				}
			}
			rep, err := Status(env, id)
			if err != nil || rep.Stage != "manual-integration" {
				t.Fatalf("stage %v, %v\n%s", rep.Stage, err, ticketStatusText(env, id))
			}
			checkTicketsOnce(t, env, id)
			t.Logf("%s: %d writer attempt(s), %d review(s)", at, len(ticketRecords(t, env, id, KindTicketWriterAttempt)), len(ticketRecords(t, env, id, KindTicketReviewAttempt)))
		})
	}
}

// checkTicketsOnce asserts every ticket accepted once, one candidate per writer attempt, each
// worktree's commits exactly its candidates', and that settling again writes nothing.
func checkTicketsOnce(t *testing.T, env Env, id string) {
	t.Helper()
	accepted := map[string]int{}
	for _, raw := range ticketRecords(t, env, id, KindTicketAccepted) {
		var a TicketAccepted
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		accepted[a.Ticket]++
	}
	if accepted["t1"] != 1 || accepted["t2"] != 1 {
		t.Fatalf("accepted %v", accepted)
	}
	cands := map[string]int{}
	seen := map[string]bool{}
	for _, raw := range ticketRecords(t, env, id, KindTicketCandidate) {
		var c CandidateRecord
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		key := c.Ticket + "@" + strconv.Itoa(c.Attempt)
		if seen[key] {
			t.Fatalf("two candidates recorded for %s", key)
		}
		seen[key] = true
		cands[c.Ticket]++
	}
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	starts := map[string]string{}
	for _, tr := range rep.Tickets {
		if tr.Accepted != nil {
			starts[tr.Ticket] = tr.Accepted.Base // the ticket's start: t2's is t1's candidate
		}
	}
	for _, raw := range ticketRecords(t, env, id, KindTicketStart) {
		var ts TicketStart
		if err := json.Unmarshal(raw, &ts); err != nil {
			t.Fatal(err)
		}
		want := ts.Base // no dependency: the run's base; t2 after t1: t1's accepted candidate
		if len(ts.DependsOn) == 1 && ts.Ticket == "t2" {
			want = rep.Tickets[0].Accepted.Candidate.Head
		}
		if starts[ts.Ticket] != want || ts.Start != want {
			t.Fatalf("%s started from %s (recorded %s), want %s", ts.Ticket, starts[ts.Ticket], ts.Start, want)
		}
	}
	for tk, n := range cands {
		out, err := git(filepath.Join(env.Home, "worktrees", id, tk), "rev-list", "--count", "HEAD", "^"+starts[tk])
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := strconv.Atoi(strings.TrimSpace(out)); got != n {
			t.Fatalf("ticket %s's worktree holds %d commits over the base, %d candidates were recorded", tk, got, n)
		}
	}
	path := filepath.Join(env.Home, "runs", id, ledger.FileName)
	before, _ := os.ReadFile(path)
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	r.Reconcile(env)
	for _, tk := range r.Tickets.order {
		if err := r.settleTicket(context.Background(), env, l, r.Tickets.byID[tk]); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("settling again changed the run ledger")
	}
}
