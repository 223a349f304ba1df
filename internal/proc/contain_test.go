package proc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func linuxOnly(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process sweeps read /proc (Linux only)")
	}
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not available")
	}
}

// leavers are scripts that start a process in a way that leaves the shell's reach, write
// its pid (atomically) to the file named by $P and wait until it is there.
var leavers = map[string]string{
	"background": `sleep 1000 & echo $! > "$P.tmp" && mv "$P.tmp" "$P"`,
	"setsid":     `setsid sh -c 'echo $$ > "$P.tmp" && mv "$P.tmp" "$P"; exec sleep 1000' &`,
	"nohup":      `nohup sleep 1000 > /dev/null 2>&1 & echo $! > "$P.tmp" && mv "$P.tmp" "$P"`,
	"doublefork": `(sleep 1000 & echo $! > "$P.tmp" && mv "$P.tmp" "$P") &`,
	"daemon":     `setsid sh -c '(sh -c "echo \$\$ > \"$P.tmp\" && mv \"$P.tmp\" \"$P\"; exec sleep 1000" &)' > /dev/null 2>&1 < /dev/null &`,
}

// leaver returns a Spec running the leaver script name, with its pid file.
func leaver(t *testing.T, name string) (Spec, string) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := sh(leavers[name] + "\n" + `while [ ! -f "$P" ]; do sleep 0.01; done`)
	s.Env = append(os.Environ(), "P="+pidFile)
	return s, pidFile
}

func endedPids(es []Ended) []int {
	var pids []int
	for _, e := range es {
		pids = append(pids, e.Pid)
	}
	return pids
}

// TestContainEndsWhatTheRunLeft: with Contain, a process the run left — in the background,
// in a new session, under nohup, behind a double fork, as a daemon — is ended when the run's
// process exits, and Result.Ended names it.
func TestContainEndsWhatTheRunLeft(t *testing.T) {
	linuxOnly(t)
	for name := range leavers {
		t.Run(name, func(t *testing.T) {
			s, pidFile := leaver(t, name)
			s.Contain = true
			res := Run(context.Background(), s)
			if res.Outcome != Exited || res.Code != 0 {
				t.Fatalf("result = %+v", res)
			}
			pid := waitPid(t, pidFile)
			assertGone(t, pid, "the "+name+" process")
			if !slices.Contains(endedPids(res.Ended), pid) {
				t.Errorf("Ended = %v, does not name pid %d", res.Ended, pid)
			}
		})
	}
}

// Without Contain the new session survives (the group kill does not reach it): the
// difference Contain makes.
func TestWithoutContainSetsidSurvives(t *testing.T) {
	linuxOnly(t)
	s, pidFile := leaver(t, "setsid")
	s.KillGroupOnExit = true
	res := Run(context.Background(), s)
	pid := waitPid(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if res.Outcome != Exited || len(res.Ended) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if !alive(pid) {
		t.Fatal("the setsid process was ended without Contain")
	}
}

// A timeout or a cancellation ends the new session too.
func TestContainOnTimeout(t *testing.T) {
	linuxOnly(t)
	s, pidFile := leaver(t, "setsid")
	s.Args[2] += "\nsleep 1000"
	s.Contain, s.Timeout = true, 2*time.Second
	res := Run(context.Background(), s)
	if res.Outcome != TimedOut {
		t.Fatalf("result = %+v", res)
	}
	assertGone(t, waitPid(t, pidFile), "the setsid process")
}

// LeaveRunning keeps what the run left running, and its processes carry the keep tag.
func TestLeaveRunning(t *testing.T) {
	linuxOnly(t)
	s, pidFile := leaver(t, "setsid")
	s.LeaveRunning = true
	res := Run(context.Background(), s)
	pid := waitPid(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if res.Outcome != Exited || !alive(pid) {
		t.Fatalf("result = %+v, alive = %v", res, alive(pid))
	}
	if tags := tagsOf(pid); !slices.Equal(tags, []string{selfID() + ".keep"}) {
		t.Errorf("tags = %v, want the keep tag", tags)
	}
	if res := Run(context.Background(), Spec{Path: "true", Contain: true, LeaveRunning: true}); res.Outcome != StartFailed {
		t.Errorf("Contain with LeaveRunning: %+v", res)
	}
}

// A run ends only its own processes: a concurrent run's background process is not touched.
func TestContainSparesOtherRuns(t *testing.T) {
	linuxOnly(t)
	keep, stop := runningLeaver(t)

	s, pidFile := leaver(t, "setsid")
	s.Contain = true
	Run(context.Background(), s)
	assertGone(t, waitPid(t, pidFile), "the setsid process")
	if !alive(keep) {
		t.Error("a contained run ended another run's background process")
	}
	stop()
	assertGone(t, keep, "the other run's background process")
}

// runningLeaver starts a run that leaves a background process and stays running; it returns
// that process's pid and a stop that cancels the run and waits for it.
func runningLeaver(t *testing.T) (int, func()) {
	t.Helper()
	s, pidFile := leaver(t, "background")
	s.Args[2] += "; sleep 1000"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- Run(ctx, s) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return waitPid(t, pidFile), stop
}

func TestTags(t *testing.T) {
	env := withTag([]string{"A=1", EnvTag + "=outer.3"}, "inner.1")
	if !slices.Equal(env, []string{"A=1", EnvTag + "=outer.3:inner.1"}) {
		t.Errorf("nested = %q", env)
	}
	if env := withTag([]string{"A=1"}, "x.1"); !slices.Equal(env, []string{"A=1", EnvTag + "=x.1"}) {
		t.Errorf("fresh = %q", env)
	}
	tags := tagsIn([]byte("A=1\x00" + EnvTag + "=old.1\x00" + EnvTag + "=a.2:b.keep\x00"))
	if !slices.Equal(tags, []string{"a.2", "b.keep"}) {
		t.Fatalf("tags = %q", tags)
	}
	for _, c := range []struct {
		m    tagMatch
		want bool
	}{{tagMatch{tag: "a.2"}, true}, {tagMatch{tag: "a.1"}, false}, {tagMatch{id: "a"}, true},
		{tagMatch{id: "b"}, false}, {tagMatch{id: "c"}, false}} {
		if got := c.m.selects(tags); got != c.want {
			t.Errorf("%+v selects %q = %v", c.m, tags, got)
		}
	}
	if !ownedBy(tags, "b") || ownedBy(tags, "c") {
		t.Error("ownedBy")
	}
}

// helper runs this test binary as a helper process running test name with env set.
func helper(t *testing.T, name string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// TestSubreaper runs a helper that becomes a subreaper: an orphan of unknown origin (new
// session, environment cleared, parent gone) is ended with the run; an orphan left running
// is reaped once it exits (no zombie stays); and exec.Cmd's own waits are not stolen.
func TestSubreaper(t *testing.T) {
	if dir := os.Getenv("REIN_PROC_SUBREAPER"); dir != "" {
		subreaperHelper(t, dir)
		return
	}
	linuxOnly(t)
	dir := t.TempDir()
	out, err := helper(t, "TestSubreaper", "REIN_PROC_SUBREAPER="+dir).CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	escapee := waitPid(t, filepath.Join(dir, "escapee"))
	assertGone(t, escapee, "the orphan of unknown origin")
	if !strings.Contains(string(out), "ended "+strconv.Itoa(escapee)+"\n") {
		t.Errorf("the helper's run did not report ending %d:\n%s", escapee, out)
	}
}

// TestSubreaperFirstRun: the reaper is started with the first process, not by Subreap, and
// before that process starts: an orphan the very first run leaves, which exits at once, is
// still reaped (a watcher started after the run would have missed its SIGCHLD and left a
// zombie).
func TestSubreaperFirstRun(t *testing.T) {
	if dir := os.Getenv("REIN_PROC_SUBREAPER_FIRST"); dir != "" {
		if err := Subreap(); err != nil {
			t.Fatal(err)
		}
		if watching {
			t.Fatal("Subreap started the reaper before any process was started")
		}
		z := sh(`(sh -c 'echo $$ > "$D/z.tmp" && mv "$D/z.tmp" "$D/z"' &)`)
		z.Env, z.LeaveRunning = append(os.Environ(), "D="+dir), true
		if res := Run(context.Background(), z); res.Outcome != Exited || res.Code != 0 {
			t.Fatalf("first run: %+v", res)
		}
		if !watching {
			t.Fatal("the first run did not start the reaper")
		}
		zpid := waitPid(t, filepath.Join(dir, "z"))
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat("/proc/" + strconv.Itoa(zpid)); err != nil {
				return
			}
			if time.Now().After(deadline) {
				p, _ := readStat(zpid)
				t.Fatalf("the first run's orphan %d was not reaped: %+v", zpid, p)
			}
		}
	}
	linuxOnly(t)
	out, err := helper(t, "TestSubreaperFirstRun", "REIN_PROC_SUBREAPER_FIRST="+t.TempDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestSubreaperFirstRun ") {
		t.Fatalf("the helper did not run the test:\n%s", out)
	}
}

func subreaperHelper(t *testing.T, dir string) {
	if err := Subreap(); err != nil {
		t.Fatal(err)
	}
	// The escapee leaves the group and the session, clears its environment (so it carries
	// no tag) and its parent exits: only the subreaper still sees it come from rein.
	s := sh(`setsid env -i /bin/sh -c 'echo $$ > "$1/escapee.tmp" && mv "$1/escapee.tmp" "$1/escapee"; exec sleep 1000' sh "$D" &` +
		"\n" + `while [ ! -f "$D/escapee" ]; do sleep 0.01; done`)
	s.Env, s.Contain = append(os.Environ(), "D="+dir), true
	res := Run(context.Background(), s)
	for _, e := range res.Ended {
		fmt.Printf("ended %d\n", e.Pid)
	}

	// An orphan left running exits on its own: the reaper waits for it.
	z := sh(`(sh -c 'echo $$ > "$1/z.tmp" && mv "$1/z.tmp" "$1/z"; sleep 0.2' sh "$D" &)`)
	z.Env, z.LeaveRunning = s.Env, true
	Run(context.Background(), z)
	zpid := waitPid(t, filepath.Join(dir, "z"))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(zpid)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			p, _ := readStat(zpid)
			t.Fatalf("the adopted orphan %d was not reaped: %+v", zpid, p)
		}
	}

	// Many short runs at once while the reaper runs: each Run still gets its own status.
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if res := Run(context.Background(), sh(fmt.Sprintf("(true &); exit %d", i))); res.Outcome != Exited || res.Code != i {
				t.Errorf("run %d: %+v", i, res)
			}
		})
	}
	wg.Wait()
}

// TestReapAfterDeath runs a helper whose contained, journaled run leaves a background
// process and a new session, kills the helper with SIGKILL during the run, and checks that
// Reap ends both, reports them and removes the journal.
func TestReapAfterDeath(t *testing.T) {
	if dir := os.Getenv("REIN_PROC_JOURNAL"); dir != "" {
		j := OpenJournal(filepath.Join(dir, "procs"))
		s := sh(`sleep 1000 & echo $! > "$D/bg"; setsid sh -c 'echo $$ > "$D/sid"; exec sleep 1000' &` +
			"\n" + `while [ ! -s "$D/sid" ]; do sleep 0.01; done; echo ok > "$D/ready"; exec sleep 1000`)
		s.Env, s.Contain, s.Journal = append(os.Environ(), "D="+dir), true, j
		Run(context.Background(), s)
		os.Exit(0)
	}
	linuxOnly(t)
	dir := t.TempDir()
	procs := filepath.Join(dir, "procs")
	h := helper(t, "TestReapAfterDeath", "REIN_PROC_JOURNAL="+dir)
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	waitPid(t, filepath.Join(dir, "bg"))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the helper's run did not get ready")
		}
	}
	// This process's own journal is alive and must be left alone (it is written before the
	// first process it names starts).
	own := OpenJournal(procs)
	defer own.Close()
	if res := Run(context.Background(), Spec{Path: "true", Journal: own}); res.Outcome != Exited {
		t.Fatalf("run with the journal: %+v", res)
	}
	if err := h.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = h.Wait()
	bg, sid := waitPid(t, filepath.Join(dir, "bg")), waitPid(t, filepath.Join(dir, "sid"))
	if !alive(bg) || !alive(sid) {
		t.Fatal("the helper's processes died with it; nothing left to reap")
	}

	ended, err := Reap(procs)
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, bg, "the background process")
	assertGone(t, sid, "the setsid process")
	for _, pid := range []int{bg, sid} {
		if !slices.Contains(endedPids(ended), pid) {
			t.Errorf("Reap reported %v, not pid %d", ended, pid)
		}
	}
	left, _ := filepath.Glob(filepath.Join(procs, "*.json"))
	if !slices.Equal(left, []string{own.Path()}) {
		t.Errorf("journals left = %v, want only the live one %s", left, own.Path())
	}
}

// A journal Reap cannot read is kept and named in the error; the others are reaped.
func TestReapCorruptJournal(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "1-1-bad.json")
	if err := os.WriteFile(bad, []byte(`{"pid": 2, "start": 1, "id": "00", "runs": [], "extra": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dead, _ := json.Marshal(journalRecord{Pid: 2, Start: 1, ID: "0123456789abcdef"})
	deadPath := filepath.Join(dir, "2-1-dead.json")
	if err := os.WriteFile(deadPath, dead, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Reap(dir)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("err = %v, want it to name %s", err, bad)
	}
	if _, err := os.Stat(bad); err != nil {
		t.Error("the unreadable journal was removed")
	}
	if _, err := os.Stat(deadPath); err == nil {
		t.Error("the dead rein's journal was kept")
	}
	if ended, err := Reap(filepath.Join(dir, "missing")); err != nil || ended != nil {
		t.Errorf("missing dir: %v %v", ended, err)
	}
}

// TestMain makes the test binary a child subreaper, as rein's main does, when
// REIN_PROC_AS_SUBREAPER is set: TestContainAsSubreaper runs the containment tests again that
// way, where a sweep looks at rein's own subtree instead of the whole process table.
func TestMain(m *testing.M) {
	if os.Getenv("REIN_PROC_AS_SUBREAPER") != "" {
		if err := Subreap(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// TestContainAsSubreaper runs the containment tests in a helper that is a child subreaper:
// every way of leaving the run (background, setsid, nohup, double fork, daemon), a timeout and
// a concurrent run are found below rein, as they are in the whole table.
func TestContainAsSubreaper(t *testing.T) {
	linuxOnly(t)
	if os.Getenv("REIN_PROC_AS_SUBREAPER") != "" {
		if !subreaping.Load() {
			t.Fatal("the helper is no subreaper")
		}
		return
	}
	tests := []string{"TestContainAsSubreaper", "TestContainEndsWhatTheRunLeft", "TestContainOnTimeout", "TestContainSparesOtherRuns", "TestSubtree"}
	cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(tests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "REIN_PROC_AS_SUBREAPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as subreaper:\n%s", name, out)
		}
	}
}

// TestSubtree: the subtree lists a child and a grandchild (parents first) and nothing that
// is not below this process.
func TestSubtree(t *testing.T) {
	linuxOnly(t)
	grandchild, _ := runningLeaver(t)
	ps, ok := subtree(os.Getpid())
	if !ok {
		t.Skip("the kernel has no /proc/PID/task/TID/children")
	}
	at := map[int]int{}
	for i, p := range ps {
		at[p.pid] = i
		if p.pid == 1 || p.pid == os.Getpid() {
			t.Errorf("the subtree holds pid %d", p.pid)
		}
	}
	g, ok := readStat(grandchild)
	if !ok {
		t.Fatal("the grandchild is gone")
	}
	i, ok1 := at[g.ppid]
	j, ok2 := at[grandchild]
	if !ok1 || !ok2 || i > j {
		t.Errorf("subtree %v: want the shell %d before its child %d", ps, g.ppid, grandchild)
	}
}

// TestJournalWrittenBeforeTheFirstProcess: opening a journal writes nothing; the file, with
// this rein's id, exists before the first process starts (the process itself finds it);
// Close removes it.
func TestJournalWrittenBeforeTheFirstProcess(t *testing.T) {
	linuxOnly(t)
	procs := filepath.Join(t.TempDir(), "procs")
	j := OpenJournal(procs)
	if _, err := os.Stat(procs); !os.IsNotExist(err) {
		t.Fatalf("opening the journal wrote %s (%v)", procs, err)
	}
	s := sh(`cat "$D"/*.json`)
	var out strings.Builder
	s.Env, s.Stdout, s.Journal = append(os.Environ(), "D="+procs), &out, j
	if res := Run(context.Background(), s); res.Outcome != Exited || res.Code != 0 {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(out.String(), `"id":"`+selfID()+`"`) {
		t.Errorf("the process did not find the journal with this rein's id: %q", out.String())
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(procs, "*.json")); len(left) != 0 {
		t.Errorf("journals left after Close: %v", left)
	}
	if res := Run(context.Background(), Spec{Path: "true", Journal: j}); res.Outcome != StartFailed {
		t.Errorf("a run on a closed journal: %+v", res)
	}
}
