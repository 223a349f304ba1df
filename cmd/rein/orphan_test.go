package main

import (
	"bytes"
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

// scenario makes the script model call bash once with a command that records its pid and
// then becomes a long sleep (exec keeps the pid).
const scenario = `version: 1
turns:
  - calls:
      - name: bash
        args: {command: "echo $$ > child.pid.tmp && mv child.pid.tmp child.pid; exec sleep 1000"}
  - text: done
`

// TestKilledReinLeavesNoChild builds the real rein binary, runs it offline on a scenario whose
// bash call runs sleep, kills rein with SIGKILL while the sleep runs, and checks that the
// sleep dies with it (the process runner's parent-death signal; Linux only).
func TestKilledReinLeavesNoChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal that kills rein's children is Linux-only")
	}
	if testing.Short() {
		t.Skip("builds the rein binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "rein")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "sleep.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}

	rein := exec.Command(bin, "--provider", "script", "--script", "sleep.yaml", "-p", "hi")
	rein.Dir = ws
	rein.Env = append(os.Environ(), "REIN_HOME="+filepath.Join(tmp, "home"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	var output bytes.Buffer
	rein.Stdout, rein.Stderr = &output, &output
	if err := rein.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- rein.Wait() }()

	pid := waitForPid(t, filepath.Join(ws, "child.pid"), rein.Process, exited, &output)
	// The shell writes the file, then execs sleep: wait (bounded) until the exec is done.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if bytes.HasPrefix(cmdline, []byte("sleep\x00")) {
			break
		}
		if time.Now().After(deadline) {
			_ = rein.Process.Kill()
			t.Fatalf("pid %d did not become the sleep (cmdline %q)", pid, cmdline)
		}
	}
	if err := rein.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited

	deadline := time.Now().Add(10 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the bash tool's sleep (pid %d) outlived rein's SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitForPid waits (bounded) for the pid file, failing early when rein exits first. output
// is read only once rein has exited.
func waitForPid(t *testing.T, file string, rein *os.Process, exited <-chan error, output *bytes.Buffer) int {
	t.Helper()
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			t.Fatalf("rein exited (%v) before the bash call started:\n%s", err, output)
		case <-deadline:
			_ = rein.Kill()
			<-exited
			t.Fatalf("no %s after 60s:\n%s", file, output)
		case <-tick.C:
		}
		if data, err := os.ReadFile(file); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatalf("%s holds %q", file, data)
			}
			return pid
		}
	}
}

// running reports whether pid is a live process (not gone, not a zombie awaiting its reaper).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "1234 (sleep) S …".
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}
