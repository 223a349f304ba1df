// Package gitxtest builds git repositories for tests of code that runs git through gitx. Its
// [Hostile] repository configures every mechanism by which a repository's own files could make
// git run a command; each command only creates a marker file, so a test can run rein's real
// code over the repository and assert that no marker appeared.
package gitxtest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/gitx"
)

// Hostile is a repository whose .git/config, .gitattributes and hooks each try to run a
// command that creates a file in MarkerDir.
type Hostile struct {
	Dir       string // the work tree: README.md, notes.txt and src/main.go committed
	MarkerDir string // outside Dir; empty while nothing ran
}

// hooks are the hooks the repository installs, in its hooks path and in .git/hooks.
var hooks = []string{
	"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
	"post-merge", "reference-transaction", "post-index-change", "pre-auto-gc", "post-rewrite",
}

// NewHostile builds the repository in a temporary directory. The tree is committed (with no
// hostile configuration yet in place) and notes.txt is then touched, so git must read its
// content to tell whether it changed.
func NewHostile(t testing.TB) *Hostile {
	t.Helper()
	base := t.TempDir()
	h := &Hostile{Dir: filepath.Join(base, "repo"), MarkerDir: filepath.Join(base, "markers")}
	for _, d := range []string{h.Dir, h.MarkerDir, filepath.Join(h.Dir, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, h.Dir, "README.md", "# hostile\n")
	write(t, h.Dir, "notes.txt", "needle in notes\n")
	write(t, h.Dir, "src/main.go", "package main\n\n// needle in code\nfunc main() {}\n")
	write(t, h.Dir, ".gitattributes", "* filter=evil diff=evil merge=evil\n")
	g := gitx.Runner{Dir: h.Dir}
	ctx := context.Background()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=fixture", "-c", "user.email=fixture@rein.invalid", "commit", "-q", "-m", "init"},
	} {
		if _, err := g.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	h.arm(t)
	// Same size, new mtime: git must hash the content (through the clean filter) to compare.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(h.Dir, "notes.txt"), future, future); err != nil {
		t.Fatal(err)
	}
	return h
}

// arm installs the hostile configuration and hooks.
func (h *Hostile) arm(t testing.TB) {
	t.Helper()
	bin := filepath.Join(filepath.Dir(h.Dir), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// mark writes an executable that creates the marker name and then runs the shell line
	// then (git runs some values through the shell, others as a program: a path does both).
	mark := func(name, then string) string {
		p := filepath.Join(bin, name)
		script := "#!/bin/sh\ntouch '" + filepath.Join(h.MarkerDir, name) + "'\n" + then + "\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hookDir := filepath.Join(h.Dir, ".git", "evil-hooks")
	hook := mark("hook", "exit 0")
	for _, dir := range []string{hookDir, filepath.Join(h.Dir, ".git", "hooks")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range hooks {
			if err := os.Symlink(hook, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	config := []string{
		"core.fsmonitor", mark("fsmonitor", "exit 0"),
		"core.hooksPath", hookDir,
		"core.pager", mark("pager", "exec cat"),
		"pager.status", mark("pager-cmd", "exec cat"),
		"pager.log", mark("pager-cmd", "exec cat"),
		"pager.diff", mark("pager-cmd", "exec cat"),
		"diff.external", mark("diff-external", "exit 0"),
		"diff.evil.textconv", mark("textconv", `exec cat "$@"`),
		"diff.evil.command", mark("diff-command", "exit 0"),
		"filter.evil.clean", mark("filter-clean", "exec cat"),
		"filter.evil.smudge", mark("filter-smudge", "exec cat"),
		"filter.evil.process", mark("filter-process", "exit 1"),
		"merge.evil.driver", mark("merge-driver", "exit 1"),
		"alias.status", "!" + mark("alias", "exit 0"),
		"alias.ls-files", "!" + mark("alias", "exit 0"),
		"commit.gpgSign", "true",
		"gpg.program", mark("gpg", "exit 1"),
		"core.editor", mark("editor", "exit 0"),
		"core.askPass", mark("askpass", "exit 1"),
		"credential.helper", "!" + mark("credential", "exit 0"),
		"core.untrackedCache", "false",
	}
	g := gitx.Runner{Dir: h.Dir}
	for i := 0; i < len(config); i += 2 {
		if _, err := g.Run(context.Background(), "config", "--local", config[i], config[i+1]); err != nil {
			t.Fatal(err)
		}
	}
}

// Ran returns the markers present: the mechanisms that ran a command.
func (h *Hostile) Ran(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(h.MarkerDir)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, e := range entries {
		ran = append(ran, e.Name())
	}
	slices.Sort(ran)
	return ran
}

// AssertNothingRan fails t when any marker exists; what names the operation just done.
func (h *Hostile) AssertNothingRan(t testing.TB, what string) {
	t.Helper()
	if ran := h.Ran(t); len(ran) > 0 {
		t.Errorf("%s: the repository's configuration ran commands: %v", what, ran)
	}
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
