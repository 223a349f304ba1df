package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireBwrap: locally a missing bwrap skips the test with a message; in CI (CI=true) it
// fails, because .ci/run installs bubblewrap and the sandbox must be tested for real there
// (package sandboxtest does the same for other packages).
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := findBwrap("", ""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but bubblewrap is not installed (%v): .ci/run must install the %s package so the sandbox is tested", err, Package)
		}
		t.Skipf("bwrap is not installed: install the %s package to run the sandbox tests (CI runs them)", Package)
	}
}

// newSandbox builds a sandbox on a fresh workspace.
func newSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	requireBwrap(t)
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		if errors.Is(err, ErrUnavailable) && os.Getenv("CI") != "true" {
			t.Skipf("bwrap cannot build a sandbox here: %v (CI runs these tests)", err)
		}
		t.Fatal(err)
	}
	return s
}

// sh runs a bash script in the sandbox and returns its combined output and exit code.
func sh(t *testing.T, s *Sandbox, script string) (string, int) {
	t.Helper()
	p, err := s.Prepare([]string{"/bin/bash", "-c", script}, s.Workspace())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	cmd := exec.Command(p.Args[0], p.Args[1:]...)
	cmd.Env = s.Env(os.Environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run bwrap: %v", err)
	}
	return out.String(), code
}

func TestUnavailable(t *testing.T) {
	_, err := New(Config{Workspace: t.TempDir(), Bwrap: "/nonexistent/bwrap"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "bubblewrap") {
		t.Errorf("explicit missing bwrap: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = New(Config{Workspace: t.TempDir(), Fallback: "/nonexistent/bwrap"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"install the bubblewrap package", "apt-get install bubblewrap", "never runs a command unsandboxed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestCheckFailsWhenBwrapCannotRun(t *testing.T) {
	// A "bwrap" that always fails stands for one that cannot create namespaces.
	dir := t.TempDir()
	fake := filepath.Join(dir, "bwrap")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Workspace: t.TempDir(), Bwrap: fake})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Check(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "No permissions to create new namespace") || !strings.Contains(err.Error(), "user namespaces") {
		t.Errorf("Check = %v", err)
	}
}

func TestConfigRefused(t *testing.T) {
	requireBwrap(t)
	ws := t.TempDir()
	for name, cfg := range map[string]Config{
		"relative workspace":   {Workspace: "rel"},
		"root as workspace":    {Workspace: "/"},
		"system dir":           {Workspace: "/usr"},
		"etc":                  {Workspace: "/etc"},
		"missing workspace":    {Workspace: filepath.Join(ws, "missing")},
		"hide holds workspace": {Workspace: ws, Hide: []string{filepath.Dir(ws)}},
		"hide is workspace":    {Workspace: ws, Hide: []string{ws}},
		"relative hide":        {Workspace: ws, Hide: []string{"home"}},
		"absolute protect":     {Workspace: ws, Protect: []string{"/etc"}},
		"protect climbs out":   {Workspace: ws, Protect: []string{"../x"}},
		"relative read-only":   {Workspace: ws, ReadOnly: []string{"x"}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	s, err := New(Config{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prepare([]string{"true"}, t.TempDir()); err == nil {
		t.Error("Prepare accepted a working directory outside the workspace")
	}
	if _, err := s.Prepare(nil, ws); err == nil {
		t.Error("Prepare accepted an empty command")
	}
}

// TestArgs pins the flags the guarantees rest on.
func TestArgs(t *testing.T) {
	requireBwrap(t)
	ws := t.TempDir()
	s, err := New(Config{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare([]string{"make", "test"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	line := strings.Join(p.Args, " ")
	for _, want := range []string{"--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid", "--unshare-ipc",
		"--unshare-user-try", "--cap-drop ALL", "--ro-bind /usr /usr", "--ro-bind /etc /etc", "--tmpfs /tmp",
		"--bind " + ws + " " + ws, "--remount-ro / --chdir " + ws + " -- make test"} {
		if !strings.Contains(line, want) {
			t.Errorf("args lack %q:\n%s", want, line)
		}
	}
	env := s.Env([]string{"TMPDIR=/host/tmp", "A=1", "XDG_CACHE_HOME=/root/.cache"})
	if got := strings.Join(env, " "); got != "A=1 TMPDIR=/tmp XDG_CACHE_HOME=/tmp/.cache" {
		t.Errorf("Env = %s", got)
	}
}

// TestConfinement runs real commands under bwrap and checks each guarantee.
func TestConfinement(t *testing.T) {
	home := t.TempDir() // a $REIN_HOME outside the workspace
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte(`{"k":"v"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	inner := filepath.Join(ws, "rein-home") // a $REIN_HOME inside the workspace
	for _, d := range []string{inner, filepath.Join(ws, ".rein"), filepath.Join(ws, ".git/hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, c := range map[string]string{
		"rein-home/auth.json": "inner", ".rein/settings.json": "{}", ".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hostTmp, err := os.CreateTemp("", "rein-sandbox-host-*")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	t.Cleanup(func() { os.Remove(hostTmp.Name()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	s := newSandbox(t, Config{Workspace: ws, Hide: []string{home, inner}})
	cases := []struct {
		name   string
		script string
		ok     bool // exit 0 expected
	}{
		{"workspace writable", "echo data > out.txt && mkdir -p d/e && echo x > d/e/f", true},
		{"tmp writable", "echo t > /tmp/t && cat /tmp/t", true},
		{"tmp is private", "test ! -e " + hostTmp.Name(), true},
		{"TMPDIR is the private tmp", `test "$TMPDIR" = /tmp`, true},
		{"system readable", "test -r /etc/passwd && ls /usr/bin >/dev/null", true},
		{"etc read-only", "echo x >> /etc/passwd", false},
		{"usr read-only", "touch /usr/evil", false},
		{"root read-only", "mkdir /evil", false},
		{"rein home unreadable", "cat " + filepath.Join(home, "auth.json"), false},
		{"rein home absent", "test -e " + home, false},
		{"rein home inside workspace hidden", "cat " + filepath.Join(inner, "auth.json"), false},
		{"rein home inside workspace read-only", "touch " + filepath.Join(inner, "x"), false},
		{"rein policy read-only", "echo '{\"hooks\":1}' > .rein/settings.json", false},
		{"rein policy: no new file", "echo x > .rein/SYSTEM.md", false},
		{"git hooks read-only", "echo 'rm -rf ~' > .git/hooks/pre-commit", false},
		{"git config read-only", "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config", false},
		{"all of .git read-only", "echo 'ref: refs/heads/x' > .git/HEAD", false},
		{".git cannot be renamed", "mv .git .git-old", false},
		{".rein cannot be replaced", "rm -rf .rein", false},
		{"no .claude", "mkdir .claude", false},
		{"no .mcp.json", "echo '{}' > .mcp.json", false},
		{"no .agents/skills", "mkdir -p .agents/skills/x", false},
		{"no network to the host", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port), false},
		{"no outside network", "exec 3<>/dev/tcp/1.1.1.1/53", false},
		{"only loopback", "test $(grep -c : /proc/net/dev) = 1", true},
		{"own pid namespace", fmt.Sprintf("! kill -0 %d 2>/dev/null && test $$ -lt 10", os.Getpid()), true},
		{"no capabilities", "grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/self/status", true},
		{"cannot unmount", "umount " + ws + " 2>/dev/null || umount /etc 2>/dev/null", false},
		{"cannot remount", "mount -o remount,rw /usr 2>/dev/null", false},
		{"home directory not visible", `test ! -e "$HOME" || test "$HOME" = / || test -z "$(ls -A "$HOME" 2>/dev/null)"`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := sh(t, s, c.script)
			if (code == 0) != c.ok {
				t.Errorf("%q: exit %d (want success %v)\n%s", c.script, code, c.ok, out)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "data\n" {
		t.Errorf("workspace write not visible on the host: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".rein/settings.json")); string(b) != "{}" {
		t.Errorf(".rein/settings.json changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git/hooks/pre-commit")); err == nil {
		t.Error("a git hook was created")
	}
	if _, err := os.Stat("/usr/evil"); err == nil {
		t.Error("/usr/evil exists")
	}
	if b, _ := os.ReadFile(filepath.Join(inner, "auth.json")); string(b) != "inner" {
		t.Errorf("hidden file changed: %q", b)
	}
}

func TestExitStatusPassesThrough(t *testing.T) {
	s := newSandbox(t, Config{})
	if _, code := sh(t, s, "exit 7"); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
}
