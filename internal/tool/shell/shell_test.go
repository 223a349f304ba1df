package shell_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/shell"
)

func run(t *testing.T, b *shell.Bash, ctx context.Context, args string, update func(tool.Result)) tool.Result {
	t.Helper()
	res, err := b.Run(ctx, tool.Call{ID: "c1", Args: json.RawMessage(args), Update: update})
	if err != nil {
		t.Fatalf("Run(%s): %v", args, err)
	}
	return res
}

func text(r tool.Result) string {
	var sb strings.Builder
	for _, p := range r.Content {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

func cmdArgs(command string) string {
	b, _ := json.Marshal(map[string]any{"command": command})
	return string(b)
}

func cmdTimeout(command string, timeout float64) string {
	b, _ := json.Marshal(map[string]any{"command": command, "timeout": timeout})
	return string(b)
}

func details(t *testing.T, r tool.Result) *shell.Details {
	t.Helper()
	d, ok := r.Details.(*shell.Details)
	if !ok {
		t.Fatalf("details are %T, want *shell.Details", r.Details)
	}
	return d
}

func newBash(t *testing.T, opts shell.Options) (*shell.Bash, string) {
	t.Helper()
	dir := t.TempDir()
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	return shell.New(dir, opts), dir
}

func TestSpec(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	s := b.Spec()
	if s.Name != "bash" || s.Replay != tool.ReplayNever {
		t.Fatalf("spec = %+v", s)
	}
	var v map[string]any
	if err := json.Unmarshal(s.Schema, &v); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
}

func TestOutputAndWorkingDirectory(t *testing.T) {
	b, dir := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdArgs("echo hello; pwd"), nil)
	if res.IsError {
		t.Fatalf("unexpected error result: %q", text(res))
	}
	if want := "hello\n" + dir; text(res) != want {
		t.Fatalf("text = %q, want %q", text(res), want)
	}
	if d := details(t, res); d.ExitCode == nil || *d.ExitCode != 0 || d.Truncation != nil || d.FullOutputPath != "" {
		t.Fatalf("details = %+v", d)
	}
}

func TestNoOutput(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	if got := text(run(t, b, t.Context(), cmdArgs("true"), nil)); got != "(no output)" {
		t.Fatalf("text = %q", got)
	}
}

func TestStdinIsEmpty(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	if got := text(run(t, b, t.Context(), cmdArgs("cat; echo done"), nil)); got != "done" {
		t.Fatalf("text = %q", got)
	}
}

func TestStdoutStderrMergedInOrder(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdArgs("echo out1; echo err1 >&2; echo out2; echo err2 >&2"), nil)
	if want := "out1\nerr1\nout2\nerr2"; text(res) != want {
		t.Fatalf("text = %q, want %q", text(res), want)
	}
}

func TestNonZeroExitIsErrorResult(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdArgs("echo partial; exit 3"), nil)
	if !res.IsError {
		t.Fatal("IsError = false for exit 3")
	}
	if want := "partial\n\nCommand exited with code 3"; text(res) != want {
		t.Fatalf("text = %q, want %q", text(res), want)
	}
	if d := details(t, res); d.ExitCode == nil || *d.ExitCode != 3 {
		t.Fatalf("details = %+v", d)
	}
	res = run(t, b, t.Context(), cmdArgs("exit 1"), nil)
	if !res.IsError || text(res) != "Command exited with code 1" {
		t.Fatalf("empty failing command: %v %q", res.IsError, text(res))
	}
}

func TestMissingWorkingDirectory(t *testing.T) {
	b := shell.New(filepath.Join(t.TempDir(), "gone"), shell.Options{})
	if _, err := b.Run(t.Context(), tool.Call{Args: json.RawMessage(cmdArgs("true"))}); err == nil {
		t.Fatal("Run in a missing directory succeeded")
	}
}

func TestTimeoutValidation(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	for _, timeout := range []string{"0", "-1", "2147484", "1e300"} {
		args := `{"command":"true","timeout":` + timeout + `}`
		_, err := b.Run(t.Context(), tool.Call{Args: json.RawMessage(args)})
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("timeout %s: err = %v, want a timeout error", timeout, err)
		}
	}
	if res := run(t, b, t.Context(), `{"command":"echo ok","timeout":2147483}`, nil); text(res) != "ok" {
		t.Fatalf("max timeout: %q", text(res))
	}
}

// pidFrom waits for the command to write a pid file and returns the pid.
func pidFrom(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %q: %v", b, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid file %s never appeared", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertGone waits until pid no longer runs. A SIGKILLed process dies asynchronously and may
// linger as a zombie until its new parent reaps it; a zombie counts as gone.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			// The state follows the parenthesized command name.
			if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				return
			}
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTimeoutKillsGrandchild(t *testing.T) {
	b, dir := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdTimeout(`echo started; sh -c 'sleep 30 & echo $! > pid; wait'`, 1), nil)
	if !res.IsError {
		t.Fatalf("timeout is not an error result: %q", text(res))
	}
	if want := "started\n\nCommand timed out after 1 seconds"; text(res) != want {
		t.Fatalf("text = %q, want %q", text(res), want)
	}
	if d := details(t, res); !d.TimedOut || d.ExitCode != nil {
		t.Fatalf("details = %+v", d)
	}
	assertGone(t, pidFrom(t, filepath.Join(dir, "pid")))
}

func TestFractionalTimeout(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdTimeout("sleep 30", 0.2), nil)
	if !res.IsError || text(res) != "Command timed out after 0.2 seconds" {
		t.Fatalf("result = %v %q", res.IsError, text(res))
	}
}

func TestDefaultTimeout(t *testing.T) {
	b, _ := newBash(t, shell.Options{DefaultTimeout: 200 * time.Millisecond})
	res := run(t, b, t.Context(), cmdArgs("sleep 30"), nil)
	if !res.IsError || text(res) != "Command timed out after 0.2 seconds" {
		t.Fatalf("result = %v %q", res.IsError, text(res))
	}
}

func TestCancelKillsGroup(t *testing.T) {
	b, dir := newBash(t, shell.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type out struct {
		res tool.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := b.Run(ctx, tool.Call{Args: json.RawMessage(cmdArgs(`sleep 30 & echo $! > pid; wait`))})
		done <- out{res, err}
	}()
	pid := pidFrom(t, filepath.Join(dir, "pid"))
	cancel()
	o := <-done
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	if !o.res.IsError || text(o.res) != "Command aborted" {
		t.Fatalf("result = %v %q", o.res.IsError, text(o.res))
	}
	if d := details(t, o.res); !d.Aborted {
		t.Fatalf("details = %+v", d)
	}
	assertGone(t, pid)
}

// Every process a command starts ends with it: background jobs, a new session (holding the
// output pipe), nohup and a double fork; the result says what was ended.
func TestBackgroundEndsWithCommand(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not available")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: only the process group is ended")
	}
	b, dir := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdArgs(`sleep 1000 & echo $! > bg
setsid sh -c 'echo $$ > sid.tmp && mv sid.tmp sid; exec sleep 1000' &
nohup sleep 1000 > /dev/null 2>&1 & echo $! > nohup
(sleep 1000 & echo $! > df.tmp && mv df.tmp df) &
while [ ! -f sid ] || [ ! -f df ]; do sleep 0.01; done; echo done`), nil)
	if res.IsError || !strings.HasPrefix(text(res), "done\n\n[Ended 4 process(es) the command left running: ") {
		t.Errorf("result = %v %q", res.IsError, text(res))
	}
	for _, name := range []string{"bg", "sid", "nohup", "df"} {
		pid := pidFrom(t, filepath.Join(dir, name))
		assertGone(t, pid)
		if !strings.Contains(text(res), fmt.Sprintf("(pid %d)", pid)) {
			t.Errorf("the result does not name %s (pid %d): %q", name, pid, text(res))
		}
	}
	if !strings.Contains(b.Spec().Description, "are ended when the command ends") {
		t.Error("the description does not tell the model that background processes end")
	}
}

// With KeepBackground a process that leaves the group survives, and holding the output pipe
// it cannot make Run hang.
func TestKeepBackground(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not available")
	}
	b, dir := newBash(t, shell.Options{WaitDelay: 200 * time.Millisecond, KeepBackground: true})
	res := run(t, b, t.Context(), cmdArgs(`setsid sh -c 'echo $$ > pid; exec sleep 30' & sleep 0.1; echo done`), nil)
	pid := pidFrom(t, filepath.Join(dir, "pid"))
	defer syscall.Kill(pid, syscall.SIGKILL)
	if res.IsError || !strings.HasSuffix(text(res), "done") {
		t.Fatalf("result = %v %q", res.IsError, text(res))
	}
	if syscall.Kill(pid, 0) != nil {
		t.Error("with KeepBackground the background process was ended")
	}
	if strings.Contains(b.Spec().Description, "are ended when the command ends") {
		t.Error("the description promises an ending KeepBackground does not do")
	}
}

func TestSpillsLongOutputByLines(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdArgs("seq 1 5000"), nil)
	if res.IsError {
		t.Fatalf("error result: %q", text(res)[:100])
	}
	d := details(t, res)
	if d.FullOutputPath == "" || d.Truncation == nil || d.Truncation.By != tool.TruncatedByLines {
		t.Fatalf("details = %+v", d)
	}
	got := text(res)
	wantNotice := fmt.Sprintf("\n\n[Showing lines 3001-5000 of 5000. Full output: %s]", d.FullOutputPath)
	if !strings.HasSuffix(got, wantNotice) {
		t.Fatalf("text ends %q, want notice %q", got[max(0, len(got)-200):], wantNotice)
	}
	if !strings.HasPrefix(got, "3001\n3002\n") || !strings.Contains(got, "\n5000\n\n[") {
		t.Fatalf("tail is wrong: %q...", got[:20])
	}
	full, err := os.ReadFile(d.FullOutputPath)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if string(full) != want.String() {
		t.Fatalf("spill file has %d bytes, want %d", len(full), want.Len())
	}
	if d.Truncation.TotalLines != 5000 || d.Truncation.OutputLines != 2000 {
		t.Fatalf("truncation = %+v", d.Truncation)
	}
}

func TestSpillsLongOutputByBytes(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	// 1500 lines of 100 'x' + newline: 151500 bytes, under the line limit.
	res := run(t, b, t.Context(), cmdArgs(`yes "$(printf '%0100d' 0 | tr 0 x)" | head -n 1500; exit 2`), nil)
	if !res.IsError {
		t.Fatal("exit 2 is not an error")
	}
	d := details(t, res)
	if d.Truncation == nil || d.Truncation.By != tool.TruncatedByBytes || d.FullOutputPath == "" {
		t.Fatalf("details = %+v", d)
	}
	// 50 KiB hold 506 lines of 100 bytes and the 505 newlines between them.
	wantNotice := fmt.Sprintf("\n\n[Showing lines 995-1500 of 1500 (50.0KB limit). Full output: %s]\n\nCommand exited with code 2", d.FullOutputPath)
	if got := text(res); !strings.HasSuffix(got, wantNotice) {
		t.Fatalf("text ends %q, want %q", got[max(0, len(got)-200):], wantNotice)
	}
	fi, err := os.Stat(d.FullOutputPath)
	if err != nil || fi.Size() != 1500*101 {
		t.Fatalf("spill file: %v, %v", fi, err)
	}
}

func TestSpillsOneHugeLine(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdArgs(`head -c 300000 /dev/zero | tr '\0' y`), nil)
	d := details(t, res)
	if d.Truncation == nil || !d.Truncation.LastLinePartial {
		t.Fatalf("details = %+v", d)
	}
	want := strings.Repeat("y", tool.MaxBytes) + fmt.Sprintf("\n\n[Showing last 50.0KB of line 1 (line is 293.0KB). Full output: %s]", d.FullOutputPath)
	if got := text(res); got != want {
		t.Fatalf("text ends %q", got[len(got)-120:])
	}
}

func TestOutputAtLimitIsNotSpilled(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	res := run(t, b, t.Context(), cmdArgs("seq 1 2000"), nil)
	if d := details(t, res); d.Truncation != nil || d.FullOutputPath != "" {
		t.Fatalf("details = %+v", d)
	}
	if got := text(res); !strings.HasSuffix(got, "\n2000") || !strings.HasPrefix(got, "1\n2\n") {
		t.Fatalf("text = %q", got)
	}
}

func TestUpdatesAreAccumulatedSnapshots(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	var mu sync.Mutex
	var updates []string
	res := run(t, b, t.Context(), cmdArgs("echo one; sleep 0.3; echo two"), func(r tool.Result) {
		mu.Lock()
		defer mu.Unlock()
		updates = append(updates, text(r))
	})
	if text(res) != "one\ntwo" {
		t.Fatalf("text = %q", text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(updates) == 0 || updates[0] != "one" {
		t.Fatalf("updates = %q, want the first to be %q", updates, "one")
	}
	for i := 1; i < len(updates); i++ {
		if !strings.HasPrefix(updates[i], updates[i-1]) {
			t.Fatalf("update %d %q does not extend %q", i, updates[i], updates[i-1])
		}
	}
}

func TestSecretsStrippedFromEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant")
	t.Setenv("MY_SERVICE_TOKEN", "tok")
	t.Setenv("Some_Secret", "s")
	t.Setenv("REIN_PLAIN_VAR", "visible")
	b, _ := newBash(t, shell.Options{})
	got := text(run(t, b, t.Context(), cmdArgs("env"), nil))
	for _, name := range []string{"ANTHROPIC_API_KEY", "MY_SERVICE_TOKEN", "Some_Secret"} {
		if strings.Contains(got, name+"=") {
			t.Errorf("%s reached the command", name)
		}
	}
	if !strings.Contains(got, "REIN_PLAIN_VAR=visible") {
		t.Error("REIN_PLAIN_VAR did not reach the command")
	}

	// A custom list and base environment.
	b, _ = newBash(t, shell.Options{Env: []string{"A_TOKEN=1", "DROP_ME=2", "KEEP=3", "PATH=" + os.Getenv("PATH")}, StripEnv: []string{"DROP_*"}})
	got = text(run(t, b, t.Context(), cmdArgs("env | sort | grep -v -e '^PWD=' -e '^SHLVL=' -e '^_=' -e '^PATH=' -e '^REIN_PROC='"), nil))
	if got != "A_TOKEN=1\nKEEP=3" {
		t.Fatalf("env = %q", got)
	}
}

// TestSessionEnv: the session's variables are added at each call after the strip, so one
// a secret pattern would remove, set deliberately, still arrives; a later call sees what
// changed in between.
func TestSessionEnv(t *testing.T) {
	extra := "GH_TOKEN=deliberate"
	b, _ := newBash(t, shell.Options{Env: []string{"GH_TOKEN=inherited", "PATH=" + os.Getenv("PATH")},
		SessionEnv: func(env []string) []string { return append(env, extra) }})
	if got := text(run(t, b, t.Context(), cmdArgs("echo $GH_TOKEN"), nil)); got != "deliberate" {
		t.Fatalf("GH_TOKEN = %q, want the session's value", got)
	}
	extra = "LATER=1"
	if got := text(run(t, b, t.Context(), cmdArgs("echo ${GH_TOKEN:-unset} $LATER"), nil)); got != "unset 1" {
		t.Fatalf("second call saw %q, want the inherited token stripped and LATER set", got)
	}
}

func TestCustomShell(t *testing.T) {
	b, _ := newBash(t, shell.Options{Shell: "/bin/sh"})
	if got := text(run(t, b, t.Context(), cmdArgs("echo $0"), nil)); got != "/bin/sh" {
		t.Fatalf("$0 = %q", got)
	}
	b, _ = newBash(t, shell.Options{Shell: "/nonexistent/shell"})
	if _, err := b.Run(t.Context(), tool.Call{Args: json.RawMessage(cmdArgs("true"))}); err == nil {
		t.Fatal("a missing shell started")
	}
}

func TestAlreadyCancelled(t *testing.T) {
	b, dir := newBash(t, shell.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := run(t, b, ctx, cmdArgs("touch ran"), nil)
	if !res.IsError || text(res) != "Command aborted" {
		t.Fatalf("result = %v %q", res.IsError, text(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("the command ran")
	}
}

func TestSchemaValidation(t *testing.T) {
	b, _ := newBash(t, shell.Options{})
	for raw, ok := range map[string]bool{
		`{"command":"ls"}`:                   true,
		`{"command":"ls","timeout":1.5}`:     true,
		`{"command":"ls","timeout":0}`:       false,
		`{"command":"ls","timeout":-2}`:      false,
		`{"command":"ls","timeout":3e6}`:     false,
		`{"command":"ls","timeout":"10"}`:    false,
		`{"timeout":10}`:                     false,
		`{"command":"ls","Command":"rm"}`:    false,
		`{"command":"ls","extra":true}`:      false,
		`{"command":"ls","timeout":2147483}`: true,
	} {
		_, err := tool.ValidateCall(b, raw)
		var ve *tool.ValidationError
		if err != nil && !errors.As(err, &ve) {
			t.Fatalf("%s: schema unusable: %v", raw, err)
		}
		if (err == nil) != ok {
			t.Errorf("ValidateCall(%s) = %v, want ok=%v", raw, err, ok)
		}
	}
}

// findHostProc returns the host pid of a process whose command line contains token, or 0.
func findHostProc(token string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), token) && !strings.Contains(string(b), "bash\x00-c") && !strings.Contains(string(b), "bwrap") {
			return pid
		}
	}
	return 0
}

// waitHostProc waits until a process with token in its command line runs and returns its pid.
func waitHostProc(t *testing.T, token string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if pid := findHostProc(token); pid != 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process with %q appeared", token)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSandboxed(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sb := sandboxtest.New(t, sandbox.Config{Workspace: dir, Hide: []string{home}})
	b := shell.New(dir, shell.Options{Sandbox: sb, TempDir: t.TempDir()})
	if !strings.Contains(b.Spec().Description, "sandbox") {
		t.Errorf("the description does not mention the sandbox: %s", b.Spec().Description)
	}
	for _, c := range []struct {
		name, command string
		ok            bool
	}{
		{"workspace writable", "echo hi > f && cat f && pwd", true},
		{"outside read-only", "touch /etc/evil", false},
		{"rein home invisible", "cat " + filepath.Join(home, "auth.json"), false},
		{"no network", "exec 3<>/dev/tcp/127.0.0.1/1", false},
		{"exit status passes", "exit 3", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, b, t.Context(), cmdArgs(c.command), nil)
			if res.IsError == c.ok {
				t.Errorf("%q: IsError=%v: %s", c.command, res.IsError, text(res))
			}
		})
	}
	if res := run(t, b, t.Context(), cmdArgs("exit 3"), nil); !strings.HasSuffix(text(res), "Command exited with code 3") {
		t.Errorf("exit 3: %q", text(res))
	}
	if res := run(t, b, t.Context(), cmdArgs("pwd"), nil); strings.TrimSpace(text(res)) != sb.Workspace() {
		t.Errorf("pwd = %q, want %s", text(res), sb.Workspace())
	}
}

// TestSandboxTimeoutKillsEscapees: a process that leaves the process group (setsid) inside
// the sandbox still dies when the command times out.
func TestSandboxTimeoutKillsEscapees(t *testing.T) {
	dir := t.TempDir()
	sb := sandboxtest.New(t, sandbox.Config{Workspace: dir})
	b := shell.New(dir, shell.Options{Sandbox: sb, TempDir: t.TempDir(), WaitDelay: 200 * time.Millisecond})
	token := fmt.Sprintf("%d.%d", 4000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	done := make(chan tool.Result, 1)
	go func() {
		done <- run(t, b, t.Context(), cmdTimeout("setsid sleep "+token+" & sleep 30", 2), nil)
	}()
	pid := waitHostProc(t, "sleep\x00"+token)
	res := <-done
	if d := details(t, res); !d.TimedOut {
		t.Fatalf("details = %+v: %s", d, text(res))
	}
	assertGone(t, pid)
}

// TestSandboxNormalExitEndsBackground: background processes end with the command.
func TestSandboxNormalExitEndsBackground(t *testing.T) {
	dir := t.TempDir()
	sb := sandboxtest.New(t, sandbox.Config{Workspace: dir})
	b := shell.New(dir, shell.Options{Sandbox: sb, TempDir: t.TempDir(), WaitDelay: 200 * time.Millisecond})
	token := fmt.Sprintf("%d.%d", 5000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	res := run(t, b, t.Context(), cmdArgs("setsid sleep "+token+" > /dev/null 2>&1 & sleep 0.5; echo started"), nil)
	if res.IsError {
		t.Fatalf("%s", text(res))
	}
	deadline := time.Now().Add(30 * time.Second)
	for findHostProc("sleep\x00"+token) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a background process outlived the sandboxed command")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
