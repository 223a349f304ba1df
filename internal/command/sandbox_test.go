package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
)

func TestApprovedCommandSandboxed(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	sb := sandboxtest.New(t, sandbox.Config{Workspace: ws, Hide: []string{home}})
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		argv []string
		dir  string
		ok   bool
	}{
		{"workspace writable", []string{"touch", "made"}, ws, true},
		{"subdirectory", []string{"touch", "made-in-sub"}, sub, true},
		{"system read-only", []string{"touch", "/usr/evil"}, ws, false},
		{"rein home invisible", []string{"cat", filepath.Join(home, "auth.json")}, ws, false},
		{"no network", []string{"/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/1"}, ws, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), Command{ID: c.name, Argv: c.argv, Dir: c.dir, Sandbox: sb})
			if err != nil {
				t.Fatal(err)
			}
			if (res.ExitCode == 0) != c.ok {
				t.Errorf("%v: exit %d: %s", c.argv, res.ExitCode, res.Output)
			}
		})
	}
	for _, f := range []string{"made", "sub/made-in-sub"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("%s not made on the host: %v", f, err)
		}
	}

	// The environment is the scrubbed one plus the sandbox's private TMPDIR.
	t.Setenv("GOFLAGS", "-mod=mod")
	res, err := Run(context.Background(), Command{ID: "env", Argv: []string{"env"}, Dir: ws, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	if out := res.Output; !strings.Contains(out, "PATH="+FixedPath+"\n") || !strings.Contains(out, "TMPDIR=/tmp\n") || strings.Contains(out, "GOFLAGS") {
		t.Errorf("environment in the sandbox:\n%s", out)
	}

	// The timeout kills the sandbox.
	res, err = Run(context.Background(), Command{ID: "slow", Argv: []string{"sleep", "30"}, Dir: ws, Sandbox: sb, Timeout: 200 * time.Millisecond})
	if err != nil || !res.TimedOut {
		t.Errorf("timeout in the sandbox: %+v %v", res, err)
	}

	// A working directory outside the sandbox's workspace is refused before anything runs.
	err = Command{ID: "out", Argv: []string{"true"}, Dir: t.TempDir(), Sandbox: sb}.Validate()
	if !isCode(err, CodeInvalidCommand) || !strings.Contains(err.Error(), "outside the sandbox") {
		t.Errorf("Validate = %v", err)
	}
}

// TestApprovedCommandSandboxGone: when the sandbox program cannot start, the command does
// not run at all (it never runs unsandboxed).
func TestApprovedCommandSandboxGone(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{Workspace: dir, Bwrap: fake})
	if err != nil {
		t.Skipf("sandbox unavailable on this OS: %v", err)
	}
	if err := os.Remove(fake); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Command{ID: "touch", Argv: []string{"touch", "ran"}, Dir: dir, Sandbox: sb})
	if !isCode(err, CodeCommandFailed) {
		t.Errorf("Run = %v, want %s", err, CodeCommandFailed)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran without the sandbox")
	}
}
