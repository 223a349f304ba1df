package fstool

import (
	"testing"

	"github.com/reinhq/rein/internal/gitx/gitxtest"
	"github.com/reinhq/rein/internal/tool"
)

// TestFindHostileRepository: listing a repository whose own configuration names commands
// (fsmonitor, hooks, filters…) runs none of them, and still lists through git.
func TestFindHostileRepository(t *testing.T) {
	h := gitxtest.NewHostile(t)
	ws, err := tool.OpenWorkspace(h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	got, d := findRun(t, ws, map[string]any{"pattern": "*.go"})
	h.AssertNothingRan(t, "find")
	if got != "src/main.go" || d.Source != "git" {
		t.Errorf("find *.go = %q from %s, want src/main.go from git", got, d.Source)
	}
}
