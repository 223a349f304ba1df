package command

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/proc"
	"github.com/reinhq/rein/internal/refusal"
)

func TestApprovedCommandEnvScrubbed(t *testing.T) {
	for k, v := range map[string]string{
		"GOFLAGS": "-mod=mod", "GOENV": "/tmp/evil.env", "BASH_ENV": "/tmp/evil.sh", "ENV": "/tmp/evil.sh",
		"GIT_DIR": "/tmp/evil", "GIT_CONFIG_GLOBAL": "/tmp/evil", "LD_LIBRARY_PATH": "/nonexistent",
		"DYLD_INSERT_LIBRARIES": "/x", "PYTHONPATH": "/x", "PYTHONSTARTUP": "/x", "NODE_OPTIONS": "--require=/x",
		"PERL5OPT": "-Mx", "RUBYOPT": "-rx", "JAVA_TOOL_OPTIONS": "-x", "REIN_TEST_ALLOWED": "yes",
		"REIN_TEST_OTHER": "no", "ANTHROPIC_API_KEY": "x", "PATH": "/tmp/evil:" + os.Getenv("PATH"),
	} {
		t.Setenv(k, v)
	}
	c := Command{ID: "env", Argv: []string{"env"}, Dir: t.TempDir(), Env: []string{"REIN_TEST_ALLOWED", "REIN_TEST_UNSET"}}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("env exited %d: %s", res.ExitCode, res.Output)
	}
	got := strings.Split(strings.TrimSpace(res.Output), "\n")
	// The process runner's tag (one tag: rein's own environment holds none here).
	tagged := slices.DeleteFunc(slices.Clone(got), func(kv string) bool { return !strings.HasPrefix(kv, proc.EnvTag+"=") })
	if len(tagged) != 1 || strings.Contains(tagged[0], ":") {
		t.Errorf("process tag = %q, want one %s with one tag", tagged, proc.EnvTag)
	}
	got = slices.DeleteFunc(got, func(kv string) bool { return strings.HasPrefix(kv, proc.EnvTag+"=") })
	want := append([]string{"PATH=" + FixedPath, "REIN_TEST_ALLOWED=yes"}, FixedEnv...)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("environment:\n got %q\nwant %q", got, want)
	}
}

func TestApprovedCommandValidate(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]Command{
		"no id":          {Argv: []string{"true"}, Dir: dir},
		"empty argv":     {ID: "x", Dir: dir},
		"empty program":  {ID: "x", Argv: []string{""}, Dir: dir},
		"relative prog":  {ID: "x", Argv: []string{"./build.sh"}, Dir: dir},
		"relative dir":   {ID: "x", Argv: []string{"true"}, Dir: "sub"},
		"NUL argument":   {ID: "x", Argv: []string{"echo", "a\x00b"}, Dir: dir},
		"GOFLAGS":        {ID: "x", Argv: []string{"true"}, Dir: dir, Env: []string{"GOFLAGS"}},
		"LD_PRELOAD":     {ID: "x", Argv: []string{"true"}, Dir: dir, Env: []string{"LD_PRELOAD"}},
		"git lower":      {ID: "x", Argv: []string{"true"}, Dir: dir, Env: []string{"git_dir"}},
		"PATH":           {ID: "x", Argv: []string{"true"}, Dir: dir, Env: []string{"PATH"}},
		"BASH_FUNC":      {ID: "x", Argv: []string{"true"}, Dir: dir, Env: []string{"BASH_FUNC_ls%%"}},
		"bad name":       {ID: "x", Argv: []string{"true"}, Dir: dir, Env: []string{"A=B"}},
		"negative limit": {ID: "x", Argv: []string{"true"}, Dir: dir, Timeout: -1},
	} {
		if err := c.Validate(); !isCode(err, CodeInvalidCommand) {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if _, err := Run(context.Background(), c); !isCode(err, CodeInvalidCommand) {
			t.Errorf("%s: Run = %v", name, err)
		}
	}
	ok := Command{ID: "t", Argv: []string{"true"}, Dir: dir}
	if _, err := NewRegistry(ok, ok); !isCode(err, CodeInvalidCommand) {
		t.Errorf("duplicate id: %v", err)
	}
	r, err := NewRegistry(ok, Command{ID: "a", Argv: []string{"/bin/true"}, Dir: dir, Env: []string{"HOME", "GOCACHE"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.IDs(), []string{"a", "t"}) {
		t.Errorf("IDs = %v", r.IDs())
	}
	_, err = r.Get("rm")
	if !isCode(err, CodeUnknownCommand) || !strings.Contains(err.Error(), "a, t") {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := r.Run(context.Background(), "nope"); !isCode(err, CodeUnknownCommand) {
		t.Errorf("Run unknown id: %v", err)
	}
	res, err := r.Run(context.Background(), "t")
	if err != nil || res.ExitCode != 0 || res.ID != "t" {
		t.Errorf("Run(t) = %+v, %v", res, err)
	}
	// Get returns copies.
	c, _ := r.Get("t")
	c.Argv[0] = "rm"
	if c2, _ := r.Get("t"); c2.Argv[0] != "true" {
		t.Error("registry shares its argv")
	}
	empty, _ := NewRegistry()
	if _, err := empty.Get("x"); !strings.Contains(err.Error(), "none are declared") {
		t.Errorf("empty registry: %v", err)
	}
}

func TestApprovedCommandRun(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// No shell: metacharacters are plain arguments.
	res, err := Run(ctx, Command{ID: "echo", Argv: []string{"echo", "a;", "$(id)", "`x`", "|", "b"}, Dir: dir})
	if err != nil || strings.TrimSpace(res.Output) != "a; $(id) `x` | b" {
		t.Errorf("echo = %q, %v", res.Output, err)
	}
	// Working directory.
	res, _ = Run(ctx, Command{ID: "pwd", Argv: []string{"pwd"}, Dir: dir})
	if real, _ := filepath.EvalSymlinks(dir); strings.TrimSpace(res.Output) != real && strings.TrimSpace(res.Output) != dir {
		t.Errorf("pwd = %q, want %q", res.Output, dir)
	}
	// stdin is closed: cat ends at once with nothing.
	res, err = Run(ctx, Command{ID: "cat", Argv: []string{"cat"}, Dir: dir, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 || res.Output != "" || res.TimedOut {
		t.Errorf("cat = %+v, %v", res, err)
	}
	// Exit status is a result.
	res, err = Run(ctx, Command{ID: "exit", Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, Dir: dir})
	if err != nil || res.ExitCode != 3 || res.Output != "out\nerr\n" {
		t.Errorf("exit = %+v, %v", res, err)
	}
	// Output is capped, keeping the tail, with a notice.
	res, err = Run(ctx, Command{ID: "big", Argv: []string{"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a; echo END"}, Dir: dir, MaxOutput: 1000})
	if err != nil || !res.Truncated || res.TotalBytes != 100004 || !strings.HasSuffix(res.Output, "aaaEND\n") ||
		!strings.HasPrefix(res.Output, "[output truncated: showing the last 1000 of 100004 bytes]\n") || len(res.Output) > 1100 {
		t.Errorf("big = truncated %v total %d len %d head %.80q tail %q, %v", res.Truncated, res.TotalBytes, len(res.Output), res.Output, res.Output[max(0, len(res.Output)-10):], err)
	}
	// A program not in the fixed PATH.
	if _, err := Run(ctx, Command{ID: "x", Argv: []string{"rein-no-such-program"}, Dir: dir}); !isCode(err, CodeCommandFailed) {
		t.Errorf("missing program: %v", err)
	}
	if _, err := Run(ctx, Command{ID: "x", Argv: []string{"/nonexistent/prog"}, Dir: dir}); !isCode(err, CodeCommandFailed) {
		t.Errorf("missing absolute program: %v", err)
	}
}

// TestApprovedCommandTimeoutKillsGroup: the timeout kills the command and a grandchild it
// left running in the background.
func TestApprovedCommandTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	c := Command{
		ID:      "hang",
		Argv:    []string{"sh", "-c", `(sleep 300 & echo $! > "$1"; wait) & wait`, "sh", pidFile},
		Dir:     dir,
		Timeout: 300 * time.Millisecond,
	}
	start := time.Now()
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("result = %+v, want a timeout", res)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("Run took %v", d)
	}
	waitDead(t, pidFile)

	// Cancelling the context kills the group too.
	pidFile2 := filepath.Join(dir, "pid2")
	c.Argv[len(c.Argv)-1] = pidFile2
	c.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			// The shell creates the file before it writes the pid: wait for the whole line, or
			// the cancel can kill the group before the pid is there to check.
			if b, err := os.ReadFile(pidFile2); err == nil && strings.HasSuffix(string(b), "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err = Run(ctx, c)
	if err != nil || !res.Canceled {
		t.Errorf("cancelled run = %+v, %v", res, err)
	}
	waitDead(t, pidFile2)
}

// waitDead waits until the process whose pid is in file is gone or a zombie.
func waitDead(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("grandchild pid not written: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return // gone
		}
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("grandchild %d is still running after the timeout", pid)
}

func isCode(err error, c refusal.Code) bool {
	got, ok := refusal.CodeOf(err)
	return ok && got == c
}
