package system

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTicketWorkspace shows which workspaces count as a delivery run's ticket worktree: a
// directory below $REIN_HOME/worktrees, reached directly or through a symbolic link to the
// home, and nothing else (the home itself, its worktrees directory, a home without one).
func TestTicketWorkspace(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	ticket := filepath.Join(home, "worktrees", "run1", "t1")
	other := filepath.Join(base, "project")
	for _, d := range []string{ticket, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "homelink")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(base, "bare")
	if err := os.Mkdir(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		home, dir string
		want      bool
	}{
		{home, ticket, true},
		{link, ticket, true},
		{home, filepath.Join(link, "worktrees", "run1", "t1"), true},
		{home, filepath.Join(home, "worktrees"), false},
		{home, home, false},
		{home, other, false},
		{bare, other, false},
		{bare, filepath.Join(bare, "worktrees", "x"), true}, // missing: judged by its path
		{"", ticket, false},
	} {
		if got := ticketWorkspace(c.home, c.dir); got != c.want {
			t.Errorf("ticketWorkspace(%s, %s) = %v, want %v", c.home, c.dir, got, c.want)
		}
	}
}
