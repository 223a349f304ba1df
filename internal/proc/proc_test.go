package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitPid reads a pid a child writes to file, waiting (bounded) until it is there.
func waitPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(file)
		if s := string(data); strings.HasSuffix(s, "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				t.Fatalf("pid file %s: %q", file, s)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after 30s", file)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie waiting to be reaped by init does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return runtime.GOOS != "linux" // elsewhere there is no /proc: kill(0) said it runs
	}
	return !strings.Contains(string(stat), ") Z")
}

// assertGone waits (bounded: SIGKILL is delivered asynchronously) until pid no longer runs.
func assertGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func sh(script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"sh", "-c", script}}
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- Run(ctx, sh("sleep 30 & echo $! > "+pidFile+"; wait")) }()
	pid := waitPid(t, pidFile)
	cancel()
	res := <-done
	if res.Outcome != Canceled || res.Code != -1 {
		t.Errorf("result = %+v, want Canceled with code -1", res)
	}
	assertGone(t, pid, "the grandchild")
}

func TestTimeoutKillsAGrandchild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := sh("sh -c 'sleep 30 & echo $! > " + pidFile + "; wait' & wait")
	s.Timeout = 2 * time.Second // long enough to start the grandchild on a loaded machine
	res := Run(context.Background(), s)
	if res.Outcome != TimedOut || res.Code != -1 || res.Err != nil {
		t.Errorf("result = %+v, want TimedOut", res)
	}
	assertGone(t, waitPid(t, pidFile), "the great-grandchild")
}

func TestExitClassification(t *testing.T) {
	var out bytes.Buffer
	s := sh("echo out; echo err >&2; exit 3")
	s.Stdout, s.Stderr = &out, &out
	res := Run(context.Background(), s)
	if res.Outcome != Exited || res.Code != 3 || res.Pid == 0 || res.Err != nil || res.String() != "exit status 3" {
		t.Errorf("exit 3: %+v (%s)", res, res)
	}
	if out.String() != "out\nerr\n" {
		t.Errorf("merged output = %q", out.String())
	}

	if res := Run(context.Background(), sh("true")); res.Outcome != Exited || res.Code != 0 {
		t.Errorf("true: %+v", res)
	}

	res = Run(context.Background(), sh("kill -TERM $$"))
	if res.Outcome != Signaled || res.Signal != syscall.SIGTERM || res.Code != -1 || res.String() != "signal: terminated" {
		t.Errorf("kill -TERM $$: %+v", res)
	}

	res = Run(context.Background(), Spec{Path: filepath.Join(t.TempDir(), "no-such-program")})
	if res.Outcome != StartFailed || res.Err == nil || res.Pid != 0 || res.Code != -1 || !strings.HasPrefix(res.String(), "failed to start: ") {
		t.Errorf("missing program: %+v", res)
	}

	s = sh("read line; echo \"got $line\"; pwd; echo $REIN_PROC_TEST")
	s.Stdin = strings.NewReader("hello\n")
	s.Dir = t.TempDir()
	s.Env = []string{"REIN_PROC_TEST=set", "PATH=/usr/bin:/bin"}
	out.Reset()
	s.Stdout = &out
	if res := Run(context.Background(), s); res.Outcome != Exited || res.Code != 0 {
		t.Fatalf("stdin: %+v", res)
	}
	if want := "got hello\n" + s.Dir + "\nset\n"; out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}
}

// An I/O error copying the output is WaitFailed, with the exit status kept.
func TestWaitFailed(t *testing.T) {
	s := sh("echo x; exit 0")
	s.Stdout = failingWriter{}
	res := Run(context.Background(), s)
	if res.Outcome != WaitFailed || res.Err == nil || res.Code != 0 {
		t.Errorf("result = %+v, want WaitFailed with status 0", res)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A background child holding the pipe cannot make Run hang; with KillGroupOnExit it dies
// when the process exits, without it it keeps running.
func TestBackgroundChildAfterExit(t *testing.T) {
	for _, kill := range []bool{false, true} {
		pidFile := filepath.Join(t.TempDir(), "pid")
		var out bytes.Buffer
		s := sh("sleep 30 & echo $! > " + pidFile + "; exit 0")
		s.Stdout, s.WaitDelay, s.KillGroupOnExit = &out, 100*time.Millisecond, kill
		res := Run(context.Background(), s)
		if res.Outcome != Exited || res.Code != 0 {
			t.Errorf("kill=%v: %+v", kill, res)
		}
		pid := waitPid(t, pidFile)
		if kill {
			assertGone(t, pid, "the background child")
			continue
		}
		if !alive(pid) {
			t.Error("without KillGroupOnExit the background child was killed")
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestParentDeathKillsTheChild runs a helper process (this test binary) that starts
// "sleep" through Run, kills the helper with SIGKILL, and checks that sleep dies with it.
func TestParentDeathKillsTheChild(t *testing.T) {
	if os.Getenv("REIN_PROC_HELPER") != "" {
		s := sh("echo $$ > " + os.Getenv("REIN_PROC_HELPER") + "; exec sleep 1000")
		Run(context.Background(), s)
		os.Exit(0)
	}
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux-only")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	helper := exec.Command(os.Args[0], "-test.run=^TestParentDeathKillsTheChild$")
	helper.Env = append(os.Environ(), "REIN_PROC_HELPER="+pidFile)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitPid(t, pidFile)
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	assertGone(t, pid, "the child of the killed parent")
}
