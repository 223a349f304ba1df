package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// TestMain removes the binary reinBinary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// reinBinary builds the rein binary once for the tests of this file.
func reinBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process sweeps read /proc (Linux only)")
	}
	if testing.Short() {
		t.Skip("builds the rein binary")
	}
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not available")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rein-reap-test-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "rein")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// workspace makes a workspace holding scenario as s.yaml, and the environment of a rein
// that runs there offline.
func workspace(t *testing.T, scenario string) (ws string, env []string) {
	t.Helper()
	tmp := t.TempDir()
	ws = filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "s.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, append(os.Environ(), "REIN_HOME="+filepath.Join(tmp, "home"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
}

// The leavers each write their pid to <name>.pid (atomically), then the command waits until
// every file is there. escapee leaves the group and the session and clears its environment.
const leaveAll = `sleep 1000 & echo $! > bg.tmp && mv bg.tmp bg.pid
setsid sh -c 'echo $$ > sid.tmp && mv sid.tmp sid.pid; exec sleep 1000' &
nohup sleep 1000 > /dev/null 2>&1 & echo $! > nohup.tmp && mv nohup.tmp nohup.pid
(sleep 1000 & echo $! > df.tmp && mv df.tmp df.pid) &
setsid env -i /bin/sh -c 'echo $$ > esc.tmp && mv esc.tmp esc.pid; exec sleep 1000' &
for f in bg sid nohup df esc; do while [ ! -f $f.pid ]; do sleep 0.01; done; done`

// checkGone is a second bash call: it waits (bounded) until no process named in a *.pid file
// runs (gone or a zombie), then writes "ok" or the survivors to check.out.
const checkGone = `alive() { s=$(sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1); [ -n "$s" ] && [ "$s" != Z ]; }
n=0; while :; do left=""; for f in *.pid; do p=$(cat $f); alive $p && left="$left $f:$p"; done
[ -z "$left" ] && break; n=$((n+1)); [ $n -gt 1000 ] && break; sleep 0.01; done
if [ -z "$left" ]; then echo ok > check.out; else echo "alive:$left" > check.out; fi`

func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// TestToolCallLeavesNothingRunning: every process a bash call started — in the background,
// in a new session, under nohup, behind a double fork, with its environment cleared — is
// gone once the call ends (checked by the next call) and after the run.
func TestToolCallLeavesNothingRunning(t *testing.T) {
	bin := reinBinary(t)
	ws, env := workspace(t, `version: 1
turns:
  - calls:
      - name: bash
        args: {command: `+yamlQuote(leaveAll)+`}
  - calls:
      - name: bash
        args: {command: `+yamlQuote(checkGone)+`}
  - text: done
`)
	rein := exec.Command(bin, "--provider", "script", "--script", "s.yaml", "-p", "hi")
	rein.Dir, rein.Env = ws, env
	out, err := rein.CombinedOutput()
	pids := map[string]int{}
	for _, name := range []string{"bg", "sid", "nohup", "df", "esc"} {
		pids[name] = readPid(t, filepath.Join(ws, name+".pid"))
		defer syscall.Kill(pids[name], syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("rein: %v\n%s", err, out)
	}
	check, _ := os.ReadFile(filepath.Join(ws, "check.out"))
	if string(check) != "ok\n" {
		t.Errorf("after the first call ended: %q", check)
	}
	for name, pid := range pids {
		waitGone(t, pid, name)
	}
}

// TestResumeEndsWhatKilledReinLeft: rein is killed (SIGKILL) during a bash call that left a
// background process and a new session running. Both survive rein only until the next
// `rein -c` in that directory, which ends them before it records the call as interrupted and
// says on stderr what it ended.
func TestResumeEndsWhatKilledReinLeft(t *testing.T) {
	bin := reinBinary(t)
	ws, env := workspace(t, `version: 1
turns:
  - calls:
      - name: bash
        args: {command: `+yamlQuote(`sleep 1000 & echo $! > bg.tmp && mv bg.tmp bg.pid
setsid sh -c 'echo $$ > sid.tmp && mv sid.tmp sid.pid; exec sleep 1000' &
while [ ! -f sid.pid ]; do sleep 0.01; done; echo $$ > child.pid.tmp && mv child.pid.tmp child.pid; exec sleep 1000`)+`}
  - text: done
`)
	rein := exec.Command(bin, "--provider", "script", "--script", "s.yaml", "-p", "hi")
	rein.Dir, rein.Env = ws, env
	var output bytes.Buffer
	rein.Stdout, rein.Stderr = &output, &output
	if err := rein.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- rein.Wait() }()
	waitForPid(t, filepath.Join(ws, "child.pid"), rein.Process, exited, &output)
	if err := rein.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	bg, sid := readPid(t, filepath.Join(ws, "bg.pid")), readPid(t, filepath.Join(ws, "sid.pid"))
	defer syscall.Kill(bg, syscall.SIGKILL)
	defer syscall.Kill(sid, syscall.SIGKILL)
	if !running(bg) || !running(sid) {
		t.Fatal("the grandchildren died with rein; the test shows nothing")
	}

	resume := exec.Command(bin, "-c")
	resume.Dir, resume.Env = ws, env
	var stdout, stderr bytes.Buffer
	resume.Stdout, resume.Stderr = &stdout, &stderr
	if err := resume.Run(); err != nil {
		t.Fatalf("rein -c: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	waitGone(t, bg, "background")
	waitGone(t, sid, "setsid")
	errText := stderr.String()
	ended := strings.Index(errText, "an earlier rein left running when it died")
	interrupted := strings.Index(errText, "was interrupted")
	if ended < 0 || interrupted < 0 || ended > interrupted {
		t.Errorf("stderr does not say what it ended before recovering the interrupted call:\n%s", errText)
	}
	for _, pid := range []int{bg, sid} {
		if !strings.Contains(errText, "sleep (pid "+strconv.Itoa(pid)+")") {
			t.Errorf("stderr does not name pid %d:\n%s", pid, errText)
		}
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("%s holds %q", file, data)
	}
	return pid
}

// waitGone waits (bounded: a kill is delivered asynchronously) until pid no longer runs.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the %s process (pid %d) still runs", what, pid)
			return
		}
	}
}
