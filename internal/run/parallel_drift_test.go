package run

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestParallelSkillDriftRaceFree: with --parallel 2, a pinned skill of Ticket Execution
// changes once both writers' first requests are in flight. t2's writer gives up, so t2 builds
// its second writer request — and finds the drift — while rein runs t1's candidate check,
// after which it reads the run's lock for its result; t1 then goes through review and
// verification. The drift blocker recorded is the one reconciliation finds (status adds no
// second one), t2's second attempt never starts, t1 is still accepted, and the blocker lifts
// once the skill is restored. (TestParallelDriftCheckRaceFree is the -race check itself.)
func TestParallelSkillDriftRaceFree(t *testing.T) {
	giveUp := "  - match: 'ticket t2, attempt [0-9]+\\.'\n    turns:\n      - text: I cannot do this.\n        usage: {input: 50, output: 5}\n"
	// t1's first turn writes its file and submits the candidate at once: rein runs the
	// required check (two seconds) and then reads the lock for its result, while t2's second
	// request is built.
	checkFirst := `  - match: 'ticket t1, attempt [0-9]+\.'
    turns:
      - usage: {input: 100, output: 10}
        calls:
          - name: write
            args: {path: f1.go, content: "package x\n\n// F1 returns 1.\nfunc F1() int { return 1 }\n"}
          - name: rein_ticket_candidate
            args: {ticketId: t1, summary: Adds F1.}
      - text: Done.
        usage: {input: 100, output: 10}
`
	pm := &parallelModels{plan: parallelPlan("{id: t1, title: F1, specItemIds: [r1], dependsOn: []}", "{id: t2, title: F2, specItemIds: [r2], dependsOn: []}"),
		writers: checkFirst + giveUp, overlap: newOverlap("t1", "t2")}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep: ", err)
	}
	env, id, root := startSkillRun(t, map[string]string{"skills/careful/SKILL.md": skillText}, func(p *Profile) {
		p.Skills = []Skill{{Name: "careful", Revision: "r1", Path: "skills/careful", Stages: []string{StageTicketExecution}}}
		p.Verification = map[string]Verification{"slow": {Argv: []string{sleep, "2"}, Required: true}}
	})
	env.Agents = testAgents(env.Home, pm.model)
	advanceTo(t, env, id, StageTicketPlanGate, nil)
	approveOpenGate(t, env, id, GateTicketPlan)
	env.Parallel = 2
	pm.overlap.onAll = func() {
		write(t, filepath.Join(root, "skills", "careful", "SKILL.md"), skillText+"Guess when unsure.\n")
	}

	_, err = Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Blockers) != 1 || be.Blockers[0].Code != BlockSkillDrift || be.Blockers[0].Input != "skill:careful" {
		t.Fatalf("Next = %v, want %s for skill:careful", err, BlockSkillDrift)
	}
	if !pm.overlap.overlapped() {
		t.Fatal("the writers never had requests in flight at the same time")
	}
	if n := len(seqOf(t, env, id, KindTicketAccepted, "t1")); n != 1 {
		t.Errorf("t1 accepted %d times, want once", n)
	}
	if n := len(seqOf(t, env, id, KindTicketWriterStarted, "t2")); n != 1 {
		t.Errorf("t2 started %d writer attempts, want 1: none after the drift", n)
	}
	rep, _ := Status(env, id)
	if rep == nil {
		t.Fatal("no status")
	}
	drift := slices.DeleteFunc(slices.Clone(rep.Blockers), func(b Blocker) bool { return b.Code != BlockSkillDrift })
	if len(drift) != 1 || drift[0].Detail != be.Blockers[0].Detail {
		t.Fatalf("status blockers = %+v: want the recorded drift blocker once", rep.Blockers)
	}
	// Restored, the blocker lifts on evidence and t2 goes on (its writer gives up again).
	write(t, filepath.Join(root, "skills", "careful", "SKILL.md"), skillText)
	_, err = Next(context.Background(), env, id)
	if errors.As(err, &be) && slices.ContainsFunc(be.Blockers, func(b Blocker) bool { return b.Code == BlockSkillDrift }) {
		t.Fatalf("Next after the restore = %v: the drift blocker did not lift", err)
	}
	if n := len(seqOf(t, env, id, KindTicketWriterStarted, "t2")); n < 2 {
		t.Errorf("t2 started %d writer attempts after the restore, want more than 1", n)
	}
}

// TestParallelDriftCheckRaceFree: a ticket's drift check on a drifted skill (ticketSkills, as
// writerAttempt calls it) runs while another goroutine reads what the other tickets of a
// batch read without the ticket lock — the execution lock, the snapshot, the schedule — and
// what they read under it. Under -race (`go test -race ./internal/run -run Parallel`) this
// fails when the drift check writes any of it (as reconciling the whole run there did: it
// replaced the lock). The check records the drift blocker, once, whichever call finds it.
func TestParallelDriftCheckRaceFree(t *testing.T) {
	pm := &parallelModels{plan: parallelPlan("{id: t1, title: F1, specItemIds: [r1], dependsOn: []}", "{id: t2, title: F2, specItemIds: [r2], dependsOn: []}"),
		writers: fileWriter(1, false) + fileWriter(2, false)}
	env, id, root := startSkillRun(t, map[string]string{"skills/careful/SKILL.md": skillText}, func(p *Profile) {
		p.Skills = []Skill{{Name: "careful", Revision: "r1", Path: "skills/careful", Stages: []string{StageTicketExecution}}}
	})
	env.Agents = testAgents(env.Home, pm.model)
	advanceTo(t, env, id, StageTicketPlanGate, nil)
	approveOpenGate(t, env, id, GateTicketPlan)
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := r.reconcileAndRecord(env, l); err != nil { // as Next does before the tickets
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "skills", "careful", "SKILL.md"), skillText+"Guess when unsure.\n")

	done, started := make(chan struct{}), make(chan struct{})
	read := make(chan int)
	go func() { // another ticket of the batch
		n := 0
		for {
			select {
			case <-done:
				read <- n
				return
			default:
			}
			_ = r.Lock.Models[RoleReview].Model + r.Snapshot.Branch
			_ = len(r.Lock.Verification) + len(r.Lock.Skills) + len(r.Stage)
			_ = r.ticketBudget(env, RoleWriter)
			if n++; n == 1 {
				close(started)
			}
		}
	}()
	// The checks start once the reader runs: on a busy machine a new goroutine may not be
	// scheduled before twenty checks are done, and then nothing raced.
	<-started
	var errs []error
	for range 20 {
		_, err := r.ticketSkills(env, l)
		errs = append(errs, err)
	}
	close(done)
	if n := <-read; n == 0 {
		t.Fatal("the reader never ran")
	}
	for i, err := range errs {
		var be *BlockedError
		if !errors.As(err, &be) || len(be.Blockers) != 1 || be.Blockers[0].Code != BlockSkillDrift || be.Blockers[0].Input != "skill:careful" {
			t.Fatalf("check %d = %v, want %s for skill:careful", i, err, BlockSkillDrift)
		}
	}
	if n := len(slices.DeleteFunc(kinds(t, env, id), func(k string) bool { return k != KindBlocked })); n != 1 {
		t.Fatalf("%d %s records, want the drift recorded once", n, KindBlocked)
	}
}
