package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/system"
)

// check.sh is the project's test: answer.txt must hold 42. Its failure output carries a
// test name, a path with a line number and a timestamp, as real test output does.
const checkScript = `a=$(cat answer.txt 2>/dev/null)
if [ "$a" = 42 ]; then echo ok; exit 0; fi
echo "$(date -u +%Y-%m-%dT%H:%M:%S) --- FAIL: TestAnswer (0.01s)"
echo "    $PWD/answer_test.go:12: want 42, got $a"
exit 1
`

func contractYAML(extra map[string]string) string {
	c := map[string]string{
		"trigger": "manual",
		"goal":    "answer.txt holds the answer",
		"failure": "same root cause fails twice in a row",
		"budget":  "{rounds: 5, tokens: 1000000, elapsed: 1h}",
		"gate":    "[push, delete]",
		"exclude": "[secrets]",
	}
	for k, v := range extra {
		c[k] = v
	}
	return fmt.Sprintf(`trigger: %s
goal: %s
verification:
  - id: unit
    run: [sh, check.sh]
stop:
  success: all verification passes
  failure: %s
  budget: %s
memory:
  persist: [current_scope, failures, next_action, open_items, artifacts, verification]
  exclude: %s
human_gate:
  required_for: %s
  timeout: 1h
`, c["trigger"], c["goal"], c["failure"], c["budget"], c["exclude"], c["gate"])
}

// round is one scripted round: the tool calls it makes, then its report.
type round struct {
	calls  string // YAML flow list of calls, or ""
	claim  string
	report string // summary
}

func scenario(rounds ...round) string {
	var b strings.Builder
	b.WriteString("version: 1\ndialogs:\n")
	for i, r := range rounds {
		fmt.Fprintf(&b, "  - match: 'round %d of loop'\n    turns:\n", i+1)
		if r.calls != "" {
			fmt.Fprintf(&b, "      - calls: %s\n", r.calls)
		}
		fmt.Fprintf(&b, "      - calls: [{name: rein_loop_report, args: {claim: %s, summary: %q}}]\n", r.claim, r.report)
		fmt.Fprintf(&b, "      - text: 'transcript of round %d'\n", i+1)
	}
	return b.String()
}

func write(path, content string) string {
	return fmt.Sprintf(`[{name: write, args: {path: %s, content: %q}}]`, path, content)
}

type fixture struct {
	t         *testing.T
	env       Env
	ws, file  string
	mu        sync.Mutex
	requests  []string // each round's first request
	scenarioF string
}

func newFixture(t *testing.T, contract string, rounds ...round) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir()}
	home := t.TempDir()
	f.file = filepath.Join(t.TempDir(), "loop.yaml")
	mustWrite(t, f.file, contract)
	mustWrite(t, filepath.Join(f.ws, "check.sh"), checkScript)
	f.scenarioF = filepath.Join(t.TempDir(), "scenario.yaml")
	mustWrite(t, f.scenarioF, scenario(rounds...))
	agents := &system.Agents{Home: home, Getenv: func(string) string { return "" }, Retry: llm.RetryPolicy{MaxAttempts: 1}}
	agents.NewModel = func(ws string, m agentspec.Model) (llm.Model, error) {
		sm, err := script.Load(m.Script)
		if err != nil {
			return nil, err
		}
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			if len(req.Messages) == 1 {
				f.mu.Lock()
				f.requests = append(f.requests, textOf(req.Messages[0]))
				f.mu.Unlock()
			}
			return sm.Stream(ctx, req, emit)
		}), nil
	}
	f.env = Env{Home: home, Agents: agents}
	return f
}

func textOf(m llm.Message) string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == llm.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) start() string {
	f.t.Helper()
	id, err := Start(f.env, StartOptions{File: f.file, Workspace: f.ws, Model: ModelRef{Provider: "script", Script: f.scenarioF}})
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

func (f *fixture) run(id, want, reason string) *Report {
	f.t.Helper()
	state, err := Run(context.Background(), f.env, id)
	if err != nil {
		f.t.Fatalf("run: %v", err)
	}
	rep, err := Status(f.env, id)
	if err != nil {
		f.t.Fatal(err)
	}
	if state != want || rep.State != want || rep.Reason != reason {
		var b strings.Builder
		rep.WriteText(&b)
		f.t.Fatalf("run ended %s, status %s (%s), want %s (%s)\n%s", state, rep.State, rep.Reason, want, reason, b.String())
	}
	return rep
}

// kinds lists the loop ledger's record kinds.
func kinds(t *testing.T, home, id string) []string {
	t.Helper()
	var ks []string
	_, _, err := ledger.OpenReadOnly(loopDir(home, id), ledger.Options{Visit: func(r ledger.Record) error {
		ks = append(ks, r.Kind)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestClaimContradictedThenCompleted(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "41"), claim: "done", report: "wrote the answer"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed the answer"})
	id := f.start()
	rep := f.run(id, StateCompleted, ReasonVerificationPassed)
	if len(rep.History) != 2 || rep.History[0].Reason != ReasonClaimContradicted || rep.History[0].State != StateReady {
		t.Fatalf("history %+v: round 1's claim of done with failing verification must end ready, claim_contradicted", rep.History)
	}
	if len(f.requests) != 2 {
		t.Fatalf("%d first requests, want 2", len(f.requests))
	}
	r2 := f.requests[1]
	for _, want := range []string{"round 2 of loop", "verification unit failed", "want 42, got 41", "the last round reported done, but verification failed", `"completedScope": "wrote the answer"`} {
		if !strings.Contains(r2, want) {
			t.Errorf("round 2's request lacks %q:\n%s", want, r2)
		}
	}
	if strings.Contains(r2, "transcript of round 1") {
		t.Errorf("round 2's request carries round 1's transcript:\n%s", r2)
	}
	if ks := kinds(t, f.env.Home, id); strings.Count(strings.Join(ks, " "), KindCheckpoint) != 2 {
		t.Errorf("kinds %v: want a checkpoint after every round", ks)
	}
	if _, err := Run(context.Background(), f.env, id); err == nil || !strings.Contains(err.Error(), "completed") {
		t.Errorf("run of a completed loop: %v, want ErrFinished", err)
	}
}

func TestSameRootCauseStops(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"},
		round{calls: write("answer.txt", "41"), claim: "done", report: "try 2"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "never reached"})
	id := f.start()
	rep := f.run(id, StateBlocked, ReasonSameRootCause)
	if rep.Rounds != 2 || len(rep.RootCauses) != 1 || len(rep.RootCauses[0].Rounds) != 2 {
		t.Fatalf("rounds %d, root causes %+v: want one root cause failing in rounds 1 and 2 (timestamps, paths and line numbers stripped)", rep.Rounds, rep.RootCauses)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "answer.txt")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(f.ws, "answer.txt")); string(data) != "41" {
		t.Errorf("a third round ran: answer.txt is %q", data)
	}
}

func TestDifferentRootCausesContinue(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"},
		round{calls: write("answer.txt", "40"), claim: "progress", report: "try 2"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	rep := f.run(id, StateCompleted, ReasonVerificationPassed)
	if rep.Rounds != 3 {
		t.Fatalf("%d rounds, want 3", rep.Rounds)
	}
}

func TestBudgetPausesAndRaiseResumes(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"budget": "{rounds: 1}"}),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	rep := f.run(id, StateBlocked, ReasonBudgetExhausted)
	if rep.Rounds != 1 || !strings.Contains(rep.Detail, "rounds: 1 of 1") {
		t.Fatalf("rounds %d, detail %q", rep.Rounds, rep.Detail)
	}
	if err := Raise(f.env, id, map[string]string{"rounds": "2"}, ""); err == nil {
		t.Fatal("a raise without an approver was accepted")
	}
	if err := Raise(f.env, id, map[string]string{"rounds": "2"}, "ana"); err != nil {
		t.Fatal(err)
	}
	if rep, _ := Status(f.env, id); rep.State != StateReady || rep.Reason != ReasonBudgetRaised || rep.Budget.Rounds != 2 {
		t.Fatalf("after raise: %s (%s), budget %+v", rep.State, rep.Reason, rep.Budget)
	}
	f.run(id, StateCompleted, ReasonVerificationPassed)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestGateHoldsPushUntilApproved(t *testing.T) {
	push := `[{name: bash, args: {command: "git push origin HEAD:refs/heads/main && touch pushed.marker"}}]`
	f := newFixture(t, contractYAML(nil),
		round{calls: push, claim: "progress", report: "pushed"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	remote := t.TempDir()
	git(t, remote, "init", "--bare", "-q")
	git(t, f.ws, "init", "-q")
	git(t, f.ws, "add", "check.sh")
	git(t, f.ws, "commit", "-qm", "start")
	git(t, f.ws, "remote", "add", "origin", remote)
	id := f.start()
	rep := f.run(id, StateWaitingForHuman, ReasonHumanGate)
	marker := filepath.Join(f.ws, "pushed.marker")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the side effect happened before approval")
	}
	if refs := git(t, remote, "for-each-ref"); refs != "" {
		t.Fatalf("the remote got refs before approval: %s", refs)
	}
	if len(rep.Gates) != 1 || rep.Gates[0].Class != ClassPush || rep.Gates[0].ID != "g1-1" {
		t.Fatalf("gates %+v", rep.Gates)
	}
	if !strings.Contains(rep.Next, "rein loop approve "+id+" --gate g1-1") {
		t.Errorf("next %q does not name the approve command", rep.Next)
	}
	// Waiting: run does nothing, and no round runs.
	if state, err := Run(context.Background(), f.env, id); err != nil || state != StateWaitingForHuman {
		t.Fatalf("run while waiting: %s, %v", state, err)
	}
	if _, err := Approve(context.Background(), f.env, id, "g9-9", "ana"); err == nil {
		t.Fatal("an unknown gate was approved")
	}
	exit, err := Approve(context.Background(), f.env, id, "g1-1", "ana")
	if err != nil || exit != 0 {
		t.Fatalf("approve: exit %d, %v", exit, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the approved action did not run")
	}
	if refs := git(t, remote, "for-each-ref"); !strings.Contains(refs, "refs/heads/main") {
		t.Fatalf("the push did not reach the remote: %q", refs)
	}
	if _, err := Approve(context.Background(), f.env, id, "g1-1", "ana"); err == nil {
		t.Fatal("the gate was approved (and its action run) twice")
	}
	f.run(id, StateCompleted, ReasonVerificationPassed)
	if !strings.Contains(f.requests[1], "human gate g1-1 was approved by ana; rein ran the action once (exit 0)") {
		t.Errorf("round 2's request lacks the approval:\n%s", f.requests[1])
	}
}

func TestGateRejectedIsEvidence(t *testing.T) {
	del := `[{name: bash, args: {command: "rm check.sh"}}]`
	f := newFixture(t, contractYAML(nil),
		round{calls: del, claim: "progress", report: "cleaning"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	f.run(id, StateWaitingForHuman, ReasonHumanGate)
	if _, err := os.Stat(filepath.Join(f.ws, "check.sh")); err != nil {
		t.Fatal("the delete ran before a decision")
	}
	if err := Reject(f.env, id, "g1-1", "ana", "the check stays"); err != nil {
		t.Fatal(err)
	}
	f.run(id, StateCompleted, ReasonVerificationPassed)
	if _, err := os.Stat(filepath.Join(f.ws, "check.sh")); err != nil {
		t.Fatal("a rejected delete ran")
	}
	if !strings.Contains(f.requests[1], "human gate g1-1 was rejected by ana; reason: the check stays") {
		t.Errorf("round 2's request lacks the rejection:\n%s", f.requests[1])
	}
}

func TestContractDriftBlocksUntilRestored(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	orig, _ := os.ReadFile(f.file)
	mustWrite(t, f.file, contractYAML(map[string]string{"budget": "{rounds: 500}"}))
	if rep, _ := Status(f.env, id); rep.Drift == "" {
		t.Fatal("status does not report the drift")
	}
	rep := f.run(id, StateBlocked, ReasonContractDrift)
	if rep.Rounds != 0 {
		t.Fatal("a round ran on a drifted contract")
	}
	// A comment does not change the normalized contract.
	mustWrite(t, f.file, "# restored\n"+string(orig))
	f.run(id, StateCompleted, ReasonVerificationPassed)
	ks := strings.Join(kinds(t, f.env.Home, id), " ")
	if !strings.Contains(ks, KindState) {
		t.Errorf("kinds %s: the drift and its lifting are not recorded", ks)
	}
}

func TestStatusWritesNothing(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"})
	id := f.start()
	before := snapshot(t, f.env.Home)
	if _, err := Status(f.env, id); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, f.env.Home); after != before {
		t.Fatalf("status changed $REIN_HOME:\n%s\n---\n%s", before, after)
	}
}

func snapshot(t *testing.T, root string) string {
	var b strings.Builder
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "%s %d %s %x\n", p, info.Size(), info.ModTime(), len(data))
		}
		return nil
	})
	return b.String()
}

func TestCheckpointWithSecretIsRefused(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "the token is ghp_" + strings.Repeat("aB3dE5fG7h", 4)[:36]})
	id := f.start()
	rep := f.run(id, StateBlocked, ReasonCheckpointSecret)
	_ = rep
	for _, k := range kinds(t, f.env.Home, id) {
		if k == KindCheckpoint {
			t.Fatal("a checkpoint holding a secret was written")
		}
	}
	data, _ := os.ReadFile(filepath.Join(loopDir(f.env.Home, id), ledger.FileName))
	if strings.Contains(string(data), "ghp_aB3dE5") {
		t.Fatal("the secret reached the loop ledger")
	}
}

func TestMemoryExcludeDropsClasses(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"exclude": "[secrets, decisions]", "budget": "{rounds: 1}"}),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"})
	id := f.start()
	f.run(id, StateBlocked, ReasonBudgetExhausted)
	v, err := readView(f.env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := json.Marshal(v.Checkpoint)
	if v.Checkpoint.Decisions != nil || !strings.Contains(string(cp), `"decisions"`) {
		t.Fatalf("checkpoint %s: decisions must be dropped and named as excluded", cp)
	}
	if v.Checkpoint.ContractDigest != v.Started.ContractDigest || v.Checkpoint.Artifacts["workspace"] == "" || len(v.Checkpoint.RootCauses) != 1 {
		t.Fatalf("checkpoint %s lacks the contract digest, artifact digests or root causes", cp)
	}
}

func TestStaleContextRow(t *testing.T) {
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
	r2 := f.requests[1]
	if !strings.Contains(r2, "Stale: the workspace changed outside the loop since round 1's checkpoint") || strings.Contains(r2, "want 42, got 41") {
		t.Fatalf("round 2's request does not drop the stale conclusions:\n%s", r2)
	}
	if ks := strings.Join(kinds(t, f.env.Home, id), " "); !strings.Contains(ks, "budget.raised loop.state loop.trigger loop.resumed loop.state round.started") {
		t.Fatalf("kinds %s: the stale context is not recorded before round 2", ks)
	}
}

func TestInterruptedRoundIsClosed(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	id := f.start()
	l, err := openLoop(f.env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(ledger.Entry{Kind: KindRoundStart, Body: map[string]int{"round": 1}}) // a crash mid-round
	l.Close()
	rep := f.run(id, StateCompleted, ReasonVerificationPassed)
	if len(rep.History) != 2 || rep.History[0].Reason != ReasonInterrupted || rep.History[1].Round != 2 {
		t.Fatalf("history %+v: the interrupted round must be closed and the next one numbered 2", rep.History)
	}
}

// TestGateTimeoutBlocksSafely: a gate nobody decides within human_gate.timeout ends the loop
// blocked gate_timeout, the held action never runs, and the gate can no longer be approved.
func TestGateTimeoutBlocksSafely(t *testing.T) {
	del := `[{name: bash, args: {command: "rm check.sh"}}]`
	f := newFixture(t, contractYAML(nil),
		round{calls: del, claim: "progress", report: "cleaning"})
	id := f.start()
	f.run(id, StateWaitingForHuman, ReasonHumanGate)
	// Within the hour it keeps waiting.
	f.env.Now = func() time.Time { return time.Now().Add(59 * time.Minute) }
	f.run(id, StateWaitingForHuman, ReasonHumanGate)
	f.env.Now = func() time.Time { return time.Now().Add(61 * time.Minute) }
	rep := f.run(id, StateBlocked, ReasonGateTimeout)
	if rep.Rounds != 1 {
		t.Errorf("rounds %d: a round ran after the timeout", rep.Rounds)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "check.sh")); err != nil {
		t.Fatal("the held delete ran although nobody approved it")
	}
	if _, err := Approve(context.Background(), f.env, id, "g1-1", "ana"); !errors.Is(err, ErrNoGate) {
		t.Fatalf("approve after the timeout: %v, want ErrNoGate", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "check.sh")); err != nil {
		t.Fatal("an approval after the timeout ran the delete")
	}
}
