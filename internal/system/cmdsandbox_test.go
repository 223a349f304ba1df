package system

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
)

// TestCommandSandboxesAskedFor: no sandbox unless --sandbox or the global settings ask for one.
func TestCommandSandboxesAskedFor(t *testing.T) {
	sandboxtest.New(t, sandbox.Config{Workspace: t.TempDir()})
	home := t.TempDir()
	if sb, err := CommandSandboxes(home, false); sb != nil || err != nil {
		t.Fatalf("not asked for: %v", err)
	}
	if sb, err := CommandSandboxes(home, true); sb == nil || err != nil {
		t.Fatalf("--sandbox: %v", err)
	}
	if err := os.WriteFile(filepath.Join(home, SettingsFile), []byte(`{"sandbox": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(home, "worktrees", "r1", "t1")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	build, err := CommandSandboxes(home, false)
	if build == nil || err != nil {
		t.Fatalf("settings: %v", err)
	}
	sb, err := build(ws)
	if err != nil || sb.Workspace() != realPath(ws) {
		t.Fatalf("sandbox of %s: %v", ws, err)
	}
}

// TestHiddenAround: what hides $REIN_HOME is every entry beside the path down to the
// workspace when the workspace lies inside it, else $REIN_HOME itself.
func TestHiddenAround(t *testing.T) {
	home := realPath(t.TempDir())
	for _, d := range []string{"sessions", "runs", "worktrees/r1/t1", "worktrees/r1/t2", "worktrees/r2"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := hiddenAround(home, filepath.Join(home, "worktrees", "r1", "t1"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"auth.json", "runs", "sessions", "worktrees/r2", "worktrees/r1/t2"}
	for i := range want {
		want[i] = filepath.Join(home, want[i])
	}
	if !slices.Equal(got, want) {
		t.Errorf("hidden = %q, want %q", got, want)
	}
	outside := t.TempDir()
	if got, _ := hiddenAround(home, outside); !slices.Equal(got, []string{home}) {
		t.Errorf("workspace outside: hidden = %q", got)
	}
}
