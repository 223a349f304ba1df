package loop

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A changed contract blocks the loop (status says so, writing nothing); a relock records
// the new digest with its approver and spells out the budget and gate changes; the loop then
// runs on the amended contract.
func TestRelockAdoptsChangedContract(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"budget": "{rounds: 1}"}),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	f.run(id, StateBlocked, ReasonBudgetExhausted)
	locked, _ := Status(f.env, id)
	if _, err := Relock(f.env, id, "ana"); !errors.Is(err, ErrNotDrifted) {
		t.Fatalf("relock of an unchanged contract: %v, want ErrNotDrifted", err)
	}
	mustWrite(t, f.file, contractYAML(map[string]string{"budget": "{rounds: 3}", "gate": "[push]"}))
	before := snapshot(t, f.env.Home)
	rep, err := Status(f.env, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Drift, "budget, requiredFor") || !strings.Contains(rep.Next, "rein loop relock "+id) {
		t.Fatalf("drift %q, next %q: status must name the changed fields and both recoveries", rep.Drift, rep.Next)
	}
	if snapshot(t, f.env.Home) != before {
		t.Fatal("status wrote something")
	}
	f.run(id, StateBlocked, ReasonContractDrift)
	if _, err := Relock(f.env, id, " "); err == nil {
		t.Fatal("a relock without an approver was accepted")
	}
	a, err := Relock(f.env, id, "ana")
	if err != nil {
		t.Fatal(err)
	}
	if a.N != 1 || a.Approver != "ana" || a.OldDigest != locked.ContractDigest || a.NewDigest == a.OldDigest || !slices.Equal(a.Changed, []string{"budget", "requiredFor"}) {
		t.Fatalf("amendment %+v", a)
	}
	if a.Budget == nil || a.Budget.Old.Rounds != 1 || a.Budget.New.Rounds != 3 || a.Gates == nil || !slices.Equal(a.Gates.Removed, []string{ClassDelete}) {
		t.Fatalf("amendment budget %+v, gates %+v: a budget or gate change must be explicit", a.Budget, a.Gates)
	}
	var b bytes.Buffer
	WriteAmendment(&b, a)
	for _, want := range []string{"budget changed: rounds 1 -> 3", "human gate changed: added [], removed [delete]", "by ana"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("amendment text lacks %q:\n%s", want, b.String())
		}
	}
	rep, _ = Status(f.env, id)
	if rep.Drift != "" || rep.State != StateReady || rep.Reason != ReasonRelocked || rep.ContractDigest != a.NewDigest || rep.Budget.Rounds != 3 {
		t.Fatalf("after relock: %s (%s), drift %q, digest %s, budget %+v", rep.State, rep.Reason, rep.Drift, rep.ContractDigest, rep.Budget)
	}
	f.run(id, StateCompleted, ReasonVerificationPassed)
	if n := strings.Count(strings.Join(kinds(t, f.env.Home, id), " "), KindRelocked); n != 1 {
		t.Fatalf("%d relock records", n)
	}
	v, _ := readView(f.env.Home, id)
	if v.Checkpoint.ContractDigest != a.NewDigest {
		t.Fatalf("the round after the relock checkpointed contract %s, want %s", v.Checkpoint.ContractDigest, a.NewDigest)
	}
}

// A relock is refused, writing nothing, when the changed file does not validate or changes
// the trigger.
func TestRelockRefusals(t *testing.T) {
	f := newFixture(t, contractYAML(nil), round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	before := len(kinds(t, f.env.Home, id))
	mustWrite(t, f.file, contractYAML(map[string]string{"budget": "{rounds: 0}"}))
	if _, err := Relock(f.env, id, "ana"); !errors.Is(err, ErrNotRelockable) || !strings.Contains(err.Error(), "stop.budget.rounds") {
		t.Fatalf("relock of an invalid contract: %v", err)
	}
	mustWrite(t, f.file, contractYAML(map[string]string{"trigger": "every 10m"}))
	if _, err := Relock(f.env, id, "ana"); !errors.Is(err, ErrNotRelockable) || !strings.Contains(err.Error(), "trigger") {
		t.Fatalf("relock of a new trigger: %v", err)
	}
	if n := len(kinds(t, f.env.Home, id)); n != before {
		t.Fatalf("a refused relock wrote %d records", n-before)
	}
}

// Drift while a gate waits: the relock returns the loop to waiting_for_human with the gate
// still pending (drift never drops a held action), and approving it then works.
func TestRelockKeepsPendingGate(t *testing.T) {
	del := `[{name: bash, args: {command: "rm -f check.sh.bak"}}]`
	f := newFixture(t, contractYAML(nil),
		round{calls: del, claim: "progress", report: "cleaning"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	f.run(id, StateWaitingForHuman, ReasonHumanGate)
	mustWrite(t, f.file, contractYAML(map[string]string{"budget": "{rounds: 9}"}))
	if _, err := Approve(context.Background(), f.env, id, "g1-1", "ana"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("approve on a drifted contract: %v", err)
	}
	f.run(id, StateBlocked, ReasonContractDrift)
	if _, err := Relock(f.env, id, "ana"); err != nil {
		t.Fatal(err)
	}
	rep, _ := Status(f.env, id)
	if rep.State != StateWaitingForHuman || len(rep.Gates) != 1 {
		t.Fatalf("after relock: %s (%s), gates %+v", rep.State, rep.Reason, rep.Gates)
	}
	if _, err := Approve(context.Background(), f.env, id, "g1-1", "ana"); err != nil {
		t.Fatal(err)
	}
	f.run(id, StateCompleted, ReasonVerificationPassed)
	if _, err := os.Stat(filepath.Join(f.ws, "check.sh")); err != nil {
		t.Fatal(err)
	}
}
