package loop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
)

// resumes returns the loop.resumed records of loop id, in order.
func resumes(t *testing.T, home, id string) []resumed {
	t.Helper()
	var out []resumed
	_, _, err := ledger.OpenReadOnly(loopDir(home, id), ledger.Options{Visit: func(r ledger.Record) error {
		if r.Kind == KindResumed {
			var x resumed
			if err := json.Unmarshal(r.Body, &x); err != nil {
				return err
			}
			out = append(out, x)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every round is preceded by the four resume steps, in the loop design's (README, Loops) order, recorded; a workspace
// changed since the checkpoint is found in step 2 and recorded before the round starts.
func TestResumeStepsInOrder(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"budget": "{rounds: 1}"}),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	f.run(id, StateBlocked, ReasonBudgetExhausted)
	mustWrite(t, filepath.Join(f.ws, "notes.txt"), "a person edited the workspace")
	if err := Raise(f.env, id, map[string]string{"rounds": "2"}, "ana"); err != nil {
		t.Fatal(err)
	}
	f.run(id, StateCompleted, ReasonVerificationPassed)
	rs := resumes(t, f.env.Home, id)
	if len(rs) != 2 {
		t.Fatalf("%d resume records, want one per round", len(rs))
	}
	for i, r := range rs {
		var names []string
		for _, s := range r.Steps {
			names = append(names, s.Step)
		}
		if r.Round != i+1 || strings.Join(names, " ") != "trigger artifacts scope preconditions" {
			t.Fatalf("resume %d: round %d, steps %v", i, r.Round, names)
		}
	}
	art, scope := rs[1].Steps[1], rs[1].Steps[2]
	if art.OK || !strings.Contains(art.Detail, "changed outside the loop since round 1's checkpoint") || !strings.Contains(scope.Detail, "dropped") {
		t.Fatalf("round 2's artifacts step %+v, scope %+v: the concurrent change must be found and the conclusions dropped", art, scope)
	}
	if first := rs[0].Steps[2].Detail; first != "first round: no open scope, no failure" {
		t.Fatalf("round 1's scope step: %q", first)
	}
	ks := strings.Join(kinds(t, f.env.Home, id), " ")
	if !strings.Contains(ks, "loop.resumed loop.state round.started") {
		t.Fatalf("kinds %s: the stale context must be recorded after the resume steps, before the round", ks)
	}
}

// A failed cheap precondition (a verification's program is missing) blocks before any round
// runs, naming it; once fixed, the next run looks again and the round runs.
func TestPreconditionBlocksBeforeTheRound(t *testing.T) {
	f := newFixture(t, contractYAML(nil), round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	tool := filepath.Join(f.ws, "tools", "check")
	mustWrite(t, f.file, strings.Replace(contractYAML(nil), "run: [sh, check.sh]", "run: ["+tool+"]", 1))
	id := f.start()
	rep := f.run(id, StateBlocked, ReasonPrecondition)
	if rep.Rounds != 0 || !strings.Contains(rep.Detail, "verification unit: the program "+tool+" is not found") {
		t.Fatalf("rounds %d, detail %q", rep.Rounds, rep.Detail)
	}
	if rs := resumes(t, f.env.Home, id); len(rs) != 1 || rs[0].Steps[3].OK {
		t.Fatalf("resume records %+v", rs)
	}
	if err := os.MkdirAll(filepath.Join(f.ws, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tool, "#!/bin/sh\nexec sh check.sh\n")
	if err := os.Chmod(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	f.run(id, StateCompleted, ReasonVerificationPassed)
}
