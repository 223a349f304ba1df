package run

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
)

// escapeWriter: t1's first writer tries paths outside its worktree, a shell and an
// unapproved command id, then does the work.
const escapeWriter = `
  - match: 'ticket t1, attempt 1\.'
    turns:
      - calls:
          - name: write
            args: {path: ../escaped.txt, content: "out"}
          - name: read
            args: {path: /etc/hostname}
          - name: bash
            args: {command: "go test ./... && rm -rf /"}
          - name: run_command
            args: {id: rm}
      - calls:
          - name: write
            args: {path: add.go, content: "package x\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n"}
          - name: run_command
            args: {id: test}
      - calls:
          - name: rein_ticket_candidate
            args: {ticketId: t1, summary: Adds Add.}
      - text: Done.
`

// TestWriterBlockedCalls: a writer's escape and command attempts are refused with the named
// blockers, which the model sees and the attempt record counts; nothing leaves the worktree.
func TestWriterBlockedCalls(t *testing.T) {
	var seen []string
	tm := &ticketModels{extraWriter: escapeWriter}
	tm.see = func(kind string, req *llm.Request) {
		if kind != "writer" {
			return
		}
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				seen = append(seen, m.ToolName+": "+m.Text())
			}
		}
	}
	env, id := startTicketRun(t, tm, nil)
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("Next: %v\n%s", err, ticketStatusText(env, id))
	}
	var first TicketAttempt
	if err := json.Unmarshal(ticketRecords(t, env, id, KindTicketWriterAttempt)[0], &first); err != nil {
		t.Fatal(err)
	}
	if first.Ticket != "t1" || first.Outcome != "accepted" || first.Refusals[BlockWriterPathEscape] != 2 || first.Refusals[BlockWriterUnapprovedBash] != 2 {
		t.Fatalf("t1 attempt 1 = %+v\n%s", first, strings.Join(seen, "\n"))
	}
	all := strings.Join(seen, "\n")
	for _, want := range []string{"write: " + BlockWriterPathEscape, "read: " + BlockWriterPathEscape, "bash: " + BlockWriterUnapprovedBash, "run_command: " + BlockWriterUnapprovedBash, "run_command: test exited 0"} {
		if !strings.Contains(all, want) {
			t.Errorf("the writer never saw %q in its tool results:\n%s", want, all)
		}
	}
	if _, err := os.Stat(filepath.Join(env.Home, "worktrees", id, "escaped.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a write escaped the worktree")
	}
	// The counts reach status too.
	if txt := ticketStatusText(env, id); !strings.Contains(txt, BlockWriterPathEscape+"×2") {
		t.Errorf("status lacks the refusal counts:\n%s", txt)
	}
}

// TestReviewMutationBlocked: a reviewer's write is refused as ticket_review_mutation_tool_blocked
// and counted; its review still counts and the file is not written.
func TestReviewMutationBlocked(t *testing.T) {
	tm := &ticketModels{}
	tm.review = func(req string) string {
		accept := reviewAnswer(req, nil)
		body := strings.TrimPrefix(accept, "version: 1\nturns:\n")
		return "version: 1\nturns:\n  - calls:\n      - name: write\n        args: {path: add.go, content: \"package x\\n\"}\n      - name: edit\n        args: {path: add.go, oldText: a, newText: b}\n" + body
	}
	env, id := startTicketRun(t, tm, nil)
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("Next: %v\n%s", err, ticketStatusText(env, id))
	}
	for _, raw := range ticketRecords(t, env, id, KindTicketReviewAttempt) {
		var a TicketAttempt
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		if a.Outcome != "accepted" || a.Refusals[BlockReviewMutation] != 2 {
			t.Fatalf("review = %+v", a)
		}
	}
	data, err := os.ReadFile(filepath.Join(env.Home, "worktrees", id, "t1", "add.go"))
	if err != nil || !strings.Contains(string(data), "func Add") {
		t.Fatalf("the reviewer changed the candidate: %q, %v", data, err)
	}
}

// TestReviewCandidateStale: the worktree changes while the review runs: the review is void
// (ticket_review_candidate_stale, recorded once); restoring the worktree lifts the blocker
// and a new review accepts.
func TestReviewCandidateStale(t *testing.T) {
	tm := &ticketModels{}
	var env Env
	var id string
	tampered := false
	tm.review = func(req string) string {
		if strings.Contains(req, "ticket t1, review attempt 1.") && !tampered {
			tampered = true
			if err := os.WriteFile(filepath.Join(env.Home, "worktrees", id, "t1", "add.go"), []byte("package x\n// changed under review\n"), 0o644); err != nil {
				panic(err)
			}
		}
		return reviewAnswer(req, nil)
	}
	env, id = startTicketRun(t, tm, nil)
	_, err := Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || be.Blockers[0].Code != BlockReviewCandidateStale || !strings.Contains(be.Blockers[0].Detail, "add.go") {
		t.Fatalf("Next = %v, want %s naming add.go", err, BlockReviewCandidateStale)
	}
	var rv TicketAttempt
	if err := json.Unmarshal(ticketRecords(t, env, id, KindTicketReviewAttempt)[0], &rv); err != nil {
		t.Fatal(err)
	}
	if rv.Outcome != "void" || rv.Reason != BlockReviewCandidateStale {
		t.Fatalf("review = %+v", rv)
	}
	// Still stale: blocked again, recorded once.
	if _, err := Next(context.Background(), env, id); !errors.As(err, &be) || be.Blockers[0].Code != BlockReviewCandidateStale {
		t.Fatalf("second Next = %v", err)
	}
	// Reported (by status too), never recorded: restoring the worktree resolves it.
	if n := countKind(t, env, id, KindBlocked, BlockReviewCandidateStale); n != 0 {
		t.Fatalf("the stale blocker was recorded %d times", n)
	}
	wantBlocker(t, env, id, BlockReviewCandidateStale)
	if out, err := git(filepath.Join(env.Home, "worktrees", id, "t1"), "checkout", "--", "add.go"); err != nil {
		t.Fatal(out, err)
	}
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("Next after the restore: %v\n%s", err, ticketStatusText(env, id))
	}
	if rep, err := Status(env, id); err != nil || rep.Stage != "manual-integration" {
		t.Fatalf("status = %v, %v", rep.Stage, err)
	}
}

// TestReviewModelMustDifferFromWriter: a writer attempt of the ticket that ran on the review
// model (recorded before a relock, say) makes the review refuse at run time.
func TestReviewModelMustDifferFromWriter(t *testing.T) {
	tm := &ticketModels{extraWriter: strings.ReplaceAll(strings.SplitN(writerScenario, "  - match: 'ticket t1, attempt 2", 2)[0], "attempt 1", "attempt 2")}
	env, id := startTicketRun(t, tm, nil)
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	_, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	forged := TicketAttempt{Ticket: "t1", Model: modelName(rep.Locked.Models[RoleReview]), Attempt: Attempt{Stage: StageTicketExecution, Attempt: 1, Outcome: "failed", Reason: "contract_missing"}}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketWriterAttempt, Body: forged}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, err = Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || be.Blockers[0].Code != BlockReviewModelNotDistinct {
		t.Fatalf("Next = %v, want %s\n%s", err, BlockReviewModelNotDistinct, ticketStatusText(env, id))
	}
	if n := len(ticketRecords(t, env, id, KindTicketReviewStarted)); n != 0 {
		t.Fatalf("%d reviews started", n)
	}
	if !strings.Contains(be.Blockers[0].Detail, modelName(rep.Locked.Models[RoleReview])) {
		t.Errorf("detail = %s", be.Blockers[0].Detail)
	}
}
