package grep_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/gitx/gitxtest"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/grep"
)

// TestHostileRepository: searching a repository whose own configuration names commands
// (fsmonitor, hooks, filters…) runs none of them.
func TestHostileRepository(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b grep.Backend) {
		h := gitxtest.NewHostile(t)
		ws, err := tool.OpenWorkspace(h.Dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		for _, args := range []string{`{"pattern":"needle"}`, `{"pattern":"needle","path":"src"}`} {
			res, err := runGrep(t, grep.New(ws, grep.Options{Backend: b}), args)
			h.AssertNothingRan(t, "grep "+args)
			if err != nil || res.IsError || !strings.Contains(text(res), "needle in code") {
				t.Errorf("grep %s = %q, %v; want the match in src/main.go", args, text(res), err)
			}
		}
	})
}
