package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An identical retry (a round that would start from exactly what a failed round started
// from: the same inputs, planned action and expectation) is refused before it runs; a person
// changing the workspace makes the next round a different one.
func TestIdenticalRetryIsRefused(t *testing.T) {
	same := round{calls: write("answer.txt", "41"), claim: "progress", report: "wrote the answer"}
	f := newFixture(t, contractYAML(map[string]string{"failure": "same root cause fails 5 times", "budget": "{rounds: 5}"}),
		same, same, // round 2 changes nothing: round 3 would start from what round 2 started from
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	rep := f.run(id, StateBlocked, ReasonIdenticalRetry)
	if rep.Rounds != 2 || len(f.requests) != 2 {
		t.Fatalf("rounds %d, requests %d: the identical retry ran", rep.Rounds, len(f.requests))
	}
	if !strings.Contains(rep.Detail, "round 3 would retry round 2, which failed, identically") || !strings.Contains(rep.Next, "change the workspace") {
		t.Fatalf("detail %q, next %q", rep.Detail, rep.Next)
	}
	if _, err := os.Stat(filepath.Join(loopDir(f.env.Home, id), "rounds", "3")); !os.IsNotExist(err) {
		t.Fatalf("round 3's session exists (%v): the refused round ran", err)
	}
	v, err := readView(f.env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	if k1, k2 := v.Keys[1], v.Keys[2]; k1.Inputs == "" || k1 == k2 || k2.Inputs != roundKey(v, "").Inputs {
		t.Fatalf("keys %+v %+v: round 1 and 2 must differ, round 3's must equal round 2's", k1, k2)
	}

	// Running again changes nothing and records nothing new.
	before := len(kinds(t, f.env.Home, id))
	f.run(id, StateBlocked, ReasonIdenticalRetry)
	if ks := kinds(t, f.env.Home, id); len(ks) != before+2 || ks[len(ks)-2] != KindTrigger || ks[len(ks)-1] != KindResumed {
		t.Fatalf("kinds %v: a second refusal wrote more than its trigger and resume steps", ks[before:])
	}

	// A person changes the workspace: round 3 is a different round, runs, and completes.
	mustWrite(t, filepath.Join(f.ws, "hint.txt"), "the answer is 42")
	rep = f.run(id, StateCompleted, ReasonVerificationPassed)
	if rep.Rounds != 3 {
		t.Fatalf("rounds %d", rep.Rounds)
	}
	ks := strings.Join(kinds(t, f.env.Home, id), " ")
	if !strings.Contains(ks, "loop.trigger loop.resumed loop.state loop.state round.started") {
		t.Fatalf("kinds %s: stale_context then retry_lifted are not recorded before round 3 starts", ks)
	}
	ts, _, err := History(f.env, id)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, tr := range ts {
		reasons = append(reasons, tr.Reason)
	}
	want := "started verification_failed verification_failed identical_retry stale_context retry_lifted verification_passed"
	if got := strings.Join(reasons, " "); got != want {
		t.Fatalf("history %s, want %s", got, want)
	}
}

// A round whose evidence differs (here: the claim contradicted) is not an identical retry,
// and neither is one after a round that passed.
func TestRoundKeyFollowsEvidenceAndPlan(t *testing.T) {
	v := &view{Started: started{ContractDigest: "sha256:c"}}
	cp := &Checkpoint{Round: 1, ContractDigest: "sha256:c", NextStep: "look  at the sum",
		Verification: []VerificationResult{{ID: "unit", Fingerprint: "rc:1", Tail: "12:00:01 fail"}},
		RootCauses:   []RootCause{{Fingerprint: "rc:1", Check: "unit", Rounds: []int{1}}}}
	v.Checkpoint = cp
	v.LastEnd = &roundEnd{Round: 1, Reason: ReasonVerificationFailed, Verification: cp.Verification}
	k := roundKey(v, "")
	if k.Action != "look at the sum" {
		t.Fatalf("action %q", k.Action)
	}
	// What only numbers a round does not change its key.
	cp2 := *cp
	cp2.Round, cp2.RootCauses = 2, []RootCause{{Fingerprint: "rc:1", Check: "unit", Rounds: []int{1, 2}}}
	cp2.Verification = []VerificationResult{{ID: "unit", Fingerprint: "rc:1", Tail: "12:00:09 fail"}}
	v2 := *v
	v2.Checkpoint = &cp2
	if roundKey(&v2, "") != k {
		t.Fatal("the round number, root-cause rounds or an output tail changed the key")
	}
	for name, change := range map[string]func(w *view){
		"claim contradicted": func(w *view) { e := *w.LastEnd; e.Reason = ReasonClaimContradicted; w.LastEnd = &e },
		"next step":          func(w *view) { c := *w.Checkpoint; c.NextStep = "look at the divisor"; w.Checkpoint = &c },
		"open items":         func(w *view) { c := *w.Checkpoint; c.OpenItems = []string{"x"}; w.Checkpoint = &c },
		"gate decision":      func(w *view) { w.Decisions = []gateDecision{{ID: "g1-1", Decision: "rejected", Reason: "no"}} },
		"workspace": func(w *view) {
			c := *w.Checkpoint
			c.Artifacts = map[string]string{"workspace": "sha256:w"}
			w.Checkpoint = &c
		},
	} {
		w := *v
		change(&w)
		if roundKey(&w, "") == k {
			t.Errorf("%s: the key did not change", name)
		}
	}
	if roundKey(v, "sha256:other") == k {
		t.Error("a stale checkpoint did not change the key")
	}
	v.Keys = map[int]RoundKey{1: k}
	v.Ends = []roundEnd{{Round: 1, Verification: []VerificationResult{{ID: "unit", Passed: true}}}}
	if retried(v, k) != 0 {
		t.Error("a round that passed counted as a failed one to retry")
	}
	v.Ends[0].Verification = cp.Verification
	if retried(v, k) != 1 {
		t.Error("the failed round's identical retry was not found")
	}
}
