package gitx_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/gitx/gitxtest"
)

// TestHostileRepositoryIsLive proves the fixture would catch a regression: plain git, without
// the runner's hardening, runs the repository's commands.
func TestHostileRepositoryIsLive(t *testing.T) {
	// A failing process filter stops git early, so most cases switch it off; an empty one
	// also hides the clean filter, so that case removes it.
	noProcess := []string{"-c", "filter.evil.process="}
	ident := []string{"-c", "user.name=t", "-c", "user.email=t@e"}
	for _, c := range []struct {
		want   string
		change bool   // change notes.txt's content first
		unset  string // a key to remove from the repository's configuration first
		args   []string
	}{
		{"fsmonitor", false, "", []string{"status", "--porcelain"}},
		{"filter-process", false, "", []string{"status", "--porcelain"}},
		{"filter-clean", false, "filter.evil.process", []string{"status", "--porcelain"}},
		{"diff-command", true, "", append(noProcess, "diff")},
		{"diff-external", true, "diff.evil.command", append(noProcess, "diff")},
		{"textconv", false, "", append(noProcess, "-c", "diff.external=", "log", "-p", "-1")},
		{"hook", false, "", slices.Concat(noProcess, ident, []string{"commit", "-q", "--allow-empty", "-m", "x"})},
		{"gpg", false, "", slices.Concat(noProcess, ident, []string{"commit", "-q", "--allow-empty", "-m", "x"})},
	} {
		h := gitxtest.NewHostile(t)
		if c.change {
			if err := os.WriteFile(filepath.Join(h.Dir, "notes.txt"), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if c.unset != "" {
			if _, err := (gitx.Runner{Dir: h.Dir}).Run(context.Background(), "config", "--unset", c.unset); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", c.args...)
		cmd.Dir = h.Dir
		out, _ := cmd.CombinedOutput() // git may fail once the hostile command ran: the marker tells
		if ran := h.Ran(t); !slices.Contains(ran, c.want) {
			t.Errorf("plain git %v ran %v, not the %s command: the fixture tests nothing there\n%s", c.args, ran, c.want, out)
		}
	}
}

// TestNoRepositoryCommandRuns runs every operation rein performs through the runner over the
// hostile repository: none may run a command the repository configured.
func TestNoRepositoryCommandRuns(t *testing.T) {
	h := gitxtest.NewHostile(t)
	ctx := context.Background()
	g := gitx.Runner{Dir: h.Dir}
	step := func(what string, wantOK bool, err error) {
		t.Helper()
		if wantOK && err != nil {
			t.Errorf("%s: %v", what, err)
		}
		h.AssertNothingRan(t, what)
	}
	files, err := g.LsFiles(ctx, "-co", "--exclude-standard")
	step("ls-files", true, err)
	if !slices.Contains(files, "src/main.go") {
		t.Errorf("ls-files = %v, want src/main.go among them", files)
	}
	step("is-repo", g.IsRepo(ctx), nil)
	_, err = g.TopLevel(ctx)
	step("rev-parse --show-toplevel", true, err)
	_, err = g.Head(ctx)
	step("rev-parse HEAD", true, err)
	_, _, err = g.ConfigGet(ctx, "user.name")
	step("config --get", true, err)
	_, err = g.Run(ctx, "check-ignore", "-q", "--", "notes.txt")
	step("check-ignore", false, err)
	_, err = g.Run(ctx, "check-ref-format", "--branch", "rein/x")
	step("check-ref-format", true, err)
	out, err := g.Output(ctx, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude).rein")
	step("status", true, err)
	if out != "" {
		t.Errorf("status = %q, want clean (notes.txt only touched)", out)
	}
	_, err = g.Run(ctx, "status")
	step("status (long form, pager.status set)", true, err)
	_, err = g.Run(ctx, "log", "-p", "-1")
	step("log -p", true, err)
	_, err = g.Run(ctx, "diff", "HEAD")
	step("diff", true, err)
	if err := os.WriteFile(filepath.Join(h.Dir, "notes.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = g.Run(ctx, "add", "-A")
	step("add", true, err)
	_, err = g.Run(ctx, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "signed?")
	step("commit (gpgSign set, gpg.program emptied)", false, err)
	_, err = g.Run(ctx, "-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgSign=false", "commit", "-q", "-m", "change")
	step("commit", true, err)
	_, err = g.Run(ctx, "checkout", "-q", "-b", "other")
	step("checkout -b", true, err)
	_, err = g.Run(ctx, "checkout", "-q", "HEAD~1", "--", "notes.txt")
	step("checkout a file (smudge)", true, err)
	_, err = g.Run(ctx, "-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgSign=false", "commit", "-q", "--amend", "--allow-empty", "-m", "amended")
	step("commit --amend (no editor)", true, err)
	_, err = g.Run(ctx, "worktree", "add", "-q", filepath.Join(t.TempDir(), "wt"), "main")
	step("worktree add", true, err)
	_, err = g.Run(ctx, "stash", "list")
	step("stash list", true, err)
	_, err = g.Run(ctx, "gc", "--auto", "--quiet")
	step("gc --auto", true, err)
}

// TestRepositoryConfigStillReads: hardening overrides commands, not the configuration a
// repository may legitimately hold.
func TestRepositoryConfigStillReads(t *testing.T) {
	h := gitxtest.NewHostile(t)
	v, ok, err := gitx.Runner{Dir: h.Dir}.ConfigGet(context.Background(), "diff.evil.textconv")
	if err != nil || !ok || v == "" {
		t.Errorf("ConfigGet(diff.evil.textconv) = %q, %v, %v; want the repository's value", v, ok, err)
	}
}
