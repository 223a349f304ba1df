package run

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// threeTicketScenario plans t1 and t2 (independent) and t3, which depends on both; t1 writes
// add.go, t2 writes t2File, t3's test calls Add and Sub.
func threeTicketScenario(t2File string) string {
	plan := strings.Replace(ticketPlanScenario, `                - {id: t2, title: Sub, specItemIds: [a1], dependsOn: [t1]}
                - {id: t1, title: Add, specItemIds: [r1], dependsOn: []}`, `                - {id: t1, title: Add, specItemIds: [r1], dependsOn: []}
                - {id: t2, title: Sub, specItemIds: [a1], dependsOn: []}
                - {id: t3, title: Both, specItemIds: [r1, a1], dependsOn: [t2, t1]}`, 1)
	writer := func(ticket, path, content string) string {
		return `
  - match: 'ticket ` + ticket + `, attempt 1\.'
    turns:
      - calls:
          - name: write
            args: {path: ` + path + `, content: "` + content + `"}
      - calls:
          - name: rein_ticket_candidate
            args: {ticketId: ` + ticket + `, summary: Done.}
      - text: Done.
`
	}
	return plan +
		writer("t1", "add.go", `package x\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n`) +
		writer("t2", t2File, `package x\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n`) +
		writer("t3", "both_test.go", `package x\n\nimport \"testing\"\n\nfunc TestBoth(t *testing.T) {\n\tif Sub(Add(2, 3), 3) != 2 {\n\t\tt.Fatal(\"both\")\n\t}\n}\n`)
}

// TestTicketStartsFromTwoDependencies: t3 depends on t1 and t2; its worktree starts at rein's
// merge of their accepted candidates (recorded, computed again the same), its test uses both
// (go test passes only there), its candidate is its own file; integration and Reconciliation
// pass with the start merge on the branch.
func TestTicketStartsFromTwoDependencies(t *testing.T) {
	tm := &ticketModels{scenario: threeTicketScenario("sub.go")}
	env, id := startTicketRun(t, tm, nil)
	if stage, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("Next = %s, %v\n%s", stage, err, ticketStatusText(env, id))
	}
	acc := map[string]TicketAccepted{}
	for _, raw := range ticketRecords(t, env, id, KindTicketAccepted) {
		var a TicketAccepted
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		acc[a.Ticket] = a
	}
	var s3 TicketStart
	for _, raw := range ticketRecords(t, env, id, KindTicketStart) {
		var s TicketStart
		if err := strictDecode(raw, &s); err != nil {
			t.Fatal(err)
		}
		if s.Ticket == "t3" {
			s3 = s
		}
	}
	t1, t2, t3 := acc["t1"], acc["t2"], acc["t3"]
	if len(s3.DependsOn) != 2 || s3.DependsOn[0].Ticket != "t2" || s3.DependsOn[1].Commit != t1.Candidate.Head || s3.Start != t3.Base {
		t.Fatalf("t3's start = %+v, accepted base %s", s3, t3.Base)
	}
	rep, _ := Status(env, id)
	if parents, err := git(rep.Project, "log", "-1", "--format=%P|%an", t3.Base); err != nil || parents != t1.Candidate.Head+" "+t2.Candidate.Head+"|rein" {
		t.Fatalf("t3's start commit parents = %q, %v", parents, err)
	}
	if files, err := git(rep.Project, "diff-tree", "-r", "--name-only", "--no-commit-id", t3.Base, t3.Candidate.Head); err != nil || files != "both_test.go" {
		t.Fatalf("t3's change = %q, %v", files, err)
	}
	for _, want := range []string{StageManualIntegration, StageReconciliation} {
		if stage, err := Next(context.Background(), env, id); err != nil || stage != want {
			t.Fatalf("Next = %s, %v; want %s passing\n%s", stage, err, want, ticketStatusText(env, id))
		}
	}
	rep, _ = Status(env, id)
	if on, err := git(rep.Project, "merge-base", "--is-ancestor", t3.Base, rep.Delivery.Head); err != nil {
		t.Fatalf("t3's start is not on the branch: %q %v", on, err)
	}
	// The audit computes the three starts again (t3's merge included) from the ledger alone.
	// (This fixture's script models all answer as script/script, which models_distinct flags.)
	a, err := Audit(context.Background(), env, id)
	if a == nil {
		t.Fatalf("audit: %v", err)
	}
	if c := auditCheck(t, a, AuditTicketStarts); !c.Passed || c.Checked != 3 {
		t.Fatalf("%s = %+v: %+v", AuditTicketStarts, c, a.Violations)
	}
}

// TestTicketDependencyConflictBlocks: t1 and t2 write the same file differently; t3, which
// depends on both, has no start: run_ticket_dependency_conflict names t1, t2 and the file,
// and no worktree or start is made for t3.
func TestTicketDependencyConflictBlocks(t *testing.T) {
	tm := &ticketModels{scenario: threeTicketScenario("add.go")}
	env, id := startTicketRun(t, tm, nil)
	_, err := Next(context.Background(), env, id)
	codes := blockerCodes(err)
	if len(codes) != 1 || !strings.HasPrefix(codes[0], BlockDependencyConflict+": ticket t3 depends on t1 and t2") || !strings.Contains(codes[0], "conflicting files: add.go") {
		t.Fatalf("Next = %v", err)
	}
	wantBlocker(t, env, id, BlockDependencyConflict)
	for _, raw := range ticketRecords(t, env, id, KindTicketStart) {
		if strings.Contains(string(raw), `"ticket":"t3"`) {
			t.Fatalf("a start was recorded for t3: %s", raw)
		}
	}
	if n := len(ticketRecords(t, env, id, KindTicketAccepted)); n != 2 {
		t.Fatalf("%d tickets accepted, want t1 and t2", n)
	}
	if _, err := os.Stat(filepath.Join(env.Home, "worktrees", id, "t3")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a worktree was made for t3: %v", err)
	}
}
