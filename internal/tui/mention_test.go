package tui

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/reinhq/rein/internal/gitx"
)

// filesHost is a scriptHost whose workspace is a real git repository; it lists the files
// as package cli does.
type filesHost struct{ *scriptHost }

func (h filesHost) Files() ([]string, error) {
	return gitx.Runner{Dir: h.dir}.LsFiles(context.Background(), "--cached", "--others", "--exclude-standard")
}

// TestMentionCompletion: "@kern" lists the workspace's matching files, tracked and
// untracked, never an ignored one, the base-name match first; Tab completes the best.
func TestMentionCompletion(t *testing.T) {
	h := kernelWorkspace(t, "version: 1\nturns:\n  - text: ok\n")
	m, tm := startOn(t, h)
	tm.Type("explain @kern")
	waitFor(t, tm, "@notes/kernel.md", "@internal/kernel/loop.go")
	f := tm.screen()
	if strings.Contains(f, "kernel.log") || strings.Index(f, "@notes/kernel.md") > strings.Index(f, "@internal/kernel/loop.go") {
		t.Errorf("wrong completions:\n%s", f)
	}
	golden.RequireEqual(t, f)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	waitFor(t, tm, "explain @notes/kernel.md")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	if got := m.input.Value(); got != "explain @notes/kernel.md " {
		t.Errorf("after Tab the editor holds %q", got)
	}
}

// kernelWorkspace is a filesHost on scenario whose git workspace tracks
// internal/kernel/loop.go, README.md and .gitignore, and holds notes/kernel.md untracked
// and kernel.log ignored.
func kernelWorkspace(t *testing.T, scenario string) filesHost {
	t.Helper()
	h := filesHost{newScriptHost(t, scenario, "")}
	for name, body := range map[string]string{
		"internal/kernel/loop.go": "package kernel\n", "README.md": "# x\n", ".gitignore": "*.log\n",
		"notes/kernel.md": "untracked\n", "kernel.log": "ignored\n",
	} {
		p := filepath.Join(h.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := gitx.Runner{Dir: h.dir}
	for _, args := range [][]string{{"init", "-q"}, {"add", "internal", "README.md", ".gitignore"}} {
		if _, err := git.Run(context.Background(), args...); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestFuzzy ranks a base-name prefix first, then a base-name match, then a path match,
// then scattered letters, shorter first.
func TestFuzzy(t *testing.T) {
	paths := []string{"a/b/xmodel.go", "model/x.go", "internal/tui/model.go", "m/o/d/e/l.go", "tui/model.go", "view.go"}
	got := fuzzy(paths, "Model")
	want := []string{"tui/model.go", "internal/tui/model.go", "a/b/xmodel.go", "model/x.go", "m/o/d/e/l.go"}
	if !slices.Equal(got, want) {
		t.Errorf("fuzzy = %q, want %q", got, want)
	}
}
