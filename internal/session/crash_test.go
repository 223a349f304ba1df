package session_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
)

var longCrash = flag.Bool("session.long", false, "run the long crash matrix (more random kill instants)")

// crashScenario is a multi-turn session with a visible side effect (append, never replayed),
// a replay-safe read beside it and a turn of local reads alone (their intents ride on the next
// model call's fsync).
const crashScenario = `
version: 1
turns:
  - text: Logging two lines.
    calls:
      - {name: append, id: a1, args: {line: one}}
      - {name: append, id: a2, args: {line: two}}
  - text: Checking.
    calls:
      - {name: read, id: r1, args: {path: effects.txt}}
      - {name: append, id: a3, args: {line: three}}
  - calls:
      - {name: read, id: r2, args: {path: effects.txt}}
      - {name: read, id: r3, args: {path: effects.txt, offset: 2}}
  - calls:
      - {name: append, id: a4, args: {line: four}}
  - text: done
`

// appendTool appends a line to effects.txt: a side effect that must never happen twice.
type appendTool struct{ dir string }

func (appendTool) Spec() tool.Spec {
	return tool.Spec{Name: "append", Description: "append a line to effects.txt", Replay: tool.ReplayNever,
		Schema: []byte(`{"type":"object","properties":{"line":{"type":"string"}},"required":["line"],"additionalProperties":false}`)}
}

func (t appendTool) Run(_ context.Context, c tool.Call) (tool.Result, error) {
	var args struct{ Line string }
	if err := jsonUnmarshal(c.Args, &args); err != nil {
		return tool.Result{}, err
	}
	f, err := os.OpenFile(filepath.Join(t.dir, "effects.txt"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return tool.Result{}, err
	}
	defer f.Close()
	if _, err := f.WriteString(args.Line + "\n"); err != nil {
		return tool.Result{}, err
	}
	return tool.TextResult("appended " + args.Line), nil
}

func crashAgent(t testing.TB, ws string, rec kernel.Recorder) *kernel.Agent {
	model, err := script.Parse([]byte(crashScenario), "crash.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, err := tool.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.New(appendTool{dir: ws}, fstool.Read(w))
	if err != nil {
		t.Fatal(err)
	}
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// killAt returns a filesystem that SIGKILLs the process at its n-th write to the ledger file,
// before the bytes reach the file or right after.
func killAt(n int, after bool) ledger.FS {
	seen := 0
	kill := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	return &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(op ledgertest.Op) *ledgertest.Fault {
		if op.Kind != "write" || filepath.Base(op.Name) != ledger.FileName {
			return nil
		}
		if seen++; seen != n {
			return nil
		}
		if after {
			return &ledgertest.Fault{Written: op.Size, Before: kill}
		}
		return &ledgertest.Fault{Before: kill}
	}}
}

// countWrites returns a filesystem that counts the writes to the ledger file.
func countWrites(n *int) ledger.FS {
	return &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(op ledgertest.Op) *ledgertest.Fault {
		if op.Kind == "write" && filepath.Base(op.Name) == ledger.FileName {
			*n++
		}
		return nil
	}}
}

// TestCrashChild is the child process of the crash matrix; it only runs when re-executed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("REIN_CRASH_DIR")
	if dir == "" {
		t.Skip("runs only as the crash matrix's child process")
	}
	at, _ := strconv.Atoi(os.Getenv("REIN_CRASH_AT"))
	writes := 0
	opts := session.Options{Retry: session.RetryPolicy{MaxAttempts: 3}}
	ws := filepath.Join(dir, "ws")
	s, err := session.Create(filepath.Join(dir, "session"), session.Meta{ID: "crash", Cwd: ws}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Armed only once the session exists: creation itself is the ledger's to test.
	s.Close()
	opts.Ledger.FS = countWrites(&writes)
	if at > 0 {
		opts.Ledger.FS = killAt(at, os.Getenv("REIN_CRASH_AFTER") == "1")
	}
	s, _, err = session.Open(filepath.Join(dir, "session"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	out, err := crashAgent(t, ws, s).Run(context.Background(), nil, llm.UserText("log lines"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EndRun(string(out.Status)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.WriteFile(filepath.Join(dir, "writes"), []byte(strconv.Itoa(writes)), 0o644)
}

func runChild(t *testing.T, dir string, at int, after bool, killAfter time.Duration) (killed bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "REIN_CRASH_DIR="+dir, "REIN_CRASH_AT="+strconv.Itoa(at), "REIN_CRASH_AFTER="+map[bool]string{true: "1"}[after])
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if killAfter > 0 {
		timer := time.AfterFunc(killAfter, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	if err == nil {
		return false
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return true
	}
	t.Fatalf("child failed: %v\n%s", err, out)
	return false
}

// recoverAndFinish opens the crashed session, recovers it twice (the second time must change
// nothing), resumes it to completion, and checks the invariants.
func recoverAndFinish(t *testing.T, dir, label string) {
	t.Helper()
	ws := filepath.Join(dir, "ws")
	sdir := filepath.Join(dir, "session")
	opts := session.Options{Retry: session.RetryPolicy{MaxAttempts: 3}}
	if _, err := ledger.Verify(sdir, ledger.Options{}); err != nil {
		t.Fatalf("%s: the crashed ledger does not verify: %v", label, err)
	}
	s, _, err := session.Open(sdir, opts)
	if err != nil {
		t.Fatalf("%s: open: %v", label, err)
	}
	defer s.Close()
	agent := crashAgent(t, ws, s)
	if _, err := s.Recover(context.Background(), agent); err != nil {
		t.Fatalf("%s: recover: %v", label, err)
	}
	before, _ := os.ReadFile(filepath.Join(sdir, "ledger.jsonl"))
	if acts, err := s.Recover(context.Background(), agent); err != nil || len(acts) != 0 {
		t.Fatalf("%s: second recovery did %v (%v)", label, acts, err)
	}
	after, _ := os.ReadFile(filepath.Join(sdir, "ledger.jsonl"))
	if string(before) != string(after) {
		t.Fatalf("%s: second recovery changed the ledger", label)
	}
	if err := s.BeginRun(); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	ctx := s.Context()
	switch {
	case len(ctx) == 0:
		_, err = agent.Run(context.Background(), nil, llm.UserText("log lines"))
	case s.Pending():
		_, err = agent.Continue(context.Background(), ctx)
	}
	if err != nil {
		t.Fatalf("%s: resume: %v", label, err)
	}
	s.EndRun("completed")
	final := s.Context()
	if last := final[len(final)-1]; last.Role != llm.RoleAssistant || last.Text() != "done" {
		t.Fatalf("%s: the resumed session ends with %s %q, want the final answer", label, last.Role, last.Text())
	}
	checkOneResultPerCall(t, final)
	effects, _ := os.ReadFile(filepath.Join(ws, "effects.txt"))
	seen := map[string]bool{}
	for _, line := range strings.Fields(string(effects)) {
		if seen[line] {
			t.Fatalf("%s: side effect %q applied twice:\n%s", label, line, effects)
		}
		seen[line] = true
	}
	if _, err := ledger.Verify(sdir, ledger.Options{}); err != nil {
		t.Fatalf("%s: the finished ledger does not verify: %v", label, err)
	}
}

// TestCrashMatrix re-executes the test binary as a child that runs a scripted multi-turn session
// with tool calls and SIGKILLs itself at every write to the ledger (before and after the write),
// then at random instants; each time the parent opens, verifies, recovers (twice) and resumes the
// session to completion.
func TestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("crash matrix skipped in -short mode")
	}
	probe := t.TempDir()
	start := time.Now()
	if runChild(t, probe, -1, false, 0) {
		t.Fatal("the child was killed without a crash point")
	}
	data, err := os.ReadFile(filepath.Join(probe, "writes"))
	if err != nil {
		t.Fatal(err)
	}
	total, _ := strconv.Atoi(string(data))
	childTime := time.Since(start)
	if total < 10 {
		t.Fatalf("only %d ledger writes; the scenario is too small to test", total)
	}
	for at := 1; at <= total; at++ {
		for _, after := range []bool{false, true} {
			dir := t.TempDir()
			if !runChild(t, dir, at, after, 0) {
				t.Fatalf("write %d: the child was not killed", at)
			}
			recoverAndFinish(t, dir, fmt.Sprintf("kill at write %d (after=%v)", at, after))
		}
	}
	random := 5
	if *longCrash {
		random = 200
	}
	killed := 0
	for i := range random {
		dir := t.TempDir()
		delay := time.Duration(rand.Int64N(int64(childTime)))
		if runChild(t, dir, -1, false, delay) {
			killed++
		}
		if _, err := os.Stat(filepath.Join(dir, "session", "ledger.jsonl")); err != nil {
			continue // killed before the session existed
		}
		if _, err := ledger.Verify(filepath.Join(dir, "session"), ledger.Options{}); errors.Is(err, ledger.ErrIncomplete) {
			continue // killed while creating it: nothing was ever acknowledged
		}
		recoverAndFinish(t, dir, fmt.Sprintf("random kill %d after %v", i, delay))
	}
	t.Logf("%d write points × 2; %d random instants within %v, %d of them killed the child mid-run", total, random, childTime, killed)
}
