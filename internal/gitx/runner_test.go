package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/gitx"
)

// newRepo is an empty repository with HOME pointed at an empty directory, so no user
// configuration of the machine running the test applies.
func newRepo(t *testing.T) (gitx.Runner, string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g := gitx.Runner{Dir: dir}
	if _, err := g.Run(context.Background(), "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	return g, dir
}

func commit(t *testing.T, g gitx.Runner, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(g.Dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := g.Run(ctx, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "c"); err != nil {
		t.Fatal(err)
	}
}

func TestOperations(t *testing.T) {
	g, dir := newRepo(t)
	ctx := context.Background()
	if !g.IsRepo(ctx) {
		t.Fatal("IsRepo = false in a fresh repository")
	}
	if _, err := g.Head(ctx); err == nil {
		t.Error("Head succeeded in a repository with no commit")
	}
	commit(t, g, map[string]string{"a.txt": "a\n", "café.txt": "c\n"})
	head, err := g.Head(ctx)
	if err != nil || len(head) != 40 {
		t.Errorf("Head = %q, %v; want a 40-hex commit id", head, err)
	}
	top, err := gitx.Runner{Dir: dir}.TopLevel(ctx)
	if want, _ := filepath.EvalSymlinks(dir); err != nil || top != want {
		t.Errorf("TopLevel = %q, %v; want %q", top, err, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := g.LsFiles(ctx, "-co", "--exclude-standard")
	slices.Sort(files)
	if want := []string{"a.txt", "café.txt", "new.txt"}; err != nil || !slices.Equal(files, want) {
		t.Errorf("LsFiles = %q, %v; want %q (unquoted)", files, err, want)
	}
	if _, ok, err := g.ConfigGet(ctx, "user.name"); ok || err != nil {
		t.Errorf("ConfigGet(user.name) unset: ok=%v err=%v; want false, nil", ok, err)
	}
	if _, err := g.Run(ctx, "config", "user.name", "Jane Doe"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := g.ConfigGet(ctx, "user.name"); v != "Jane Doe" || !ok || err != nil {
		t.Errorf("ConfigGet(user.name) = %q, %v, %v; want Jane Doe", v, ok, err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	t.Setenv("HOME", t.TempDir())
	outside := gitx.Runner{Dir: t.TempDir()}
	if outside.IsRepo(ctx) {
		t.Error("IsRepo = true outside any repository")
	}
	_, err := outside.Run(ctx, "rev-parse", "--git-dir")
	var ge *gitx.Error
	if !errors.Is(err, gitx.ErrNotRepo) || !errors.As(err, &ge) || ge.ExitCode != 128 || !slices.Equal(ge.Args, []string{"rev-parse", "--git-dir"}) {
		t.Errorf("outside a repository: %#v; want *Error{Args, ExitCode 128} that is ErrNotRepo", err)
	}
	if errors.Is(err, gitx.ErrNoGit) {
		t.Error("not-a-repository also reads as ErrNoGit")
	}

	g, _ := newRepo(t)
	many := []string{"ls-files", "--error-unmatch", "--"}
	for i := range 500 {
		many = append(many, strings.Repeat("x", 20)+string(rune('a'+i%26)))
	}
	_, err = g.Run(ctx, many...)
	if !errors.As(err, &ge) || ge.ExitCode != 1 || len(ge.Stderr) > gitx.StderrCap+100 || !strings.Contains(ge.Stderr, "more bytes") {
		t.Errorf("a long stderr: %d bytes kept, err %v; want at most %d and a note", len(ge.Stderr), err, gitx.StderrCap)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Run(cancelled, "status"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v; want context.Canceled", err)
	}

	t.Setenv("PATH", t.TempDir())
	_, err = g.Run(ctx, "status")
	if !errors.Is(err, gitx.ErrNoGit) || !errors.As(err, &ge) || ge.ExitCode != -1 {
		t.Errorf("no git on PATH: %v; want ErrNoGit with exit code -1", err)
	}
	if g.IsRepo(ctx) {
		t.Error("IsRepo = true with no git")
	}
}

// TestEnvironmentDoesNotReachGit: variables that would point git at another repository or
// inject configuration are not inherited.
func TestEnvironmentDoesNotReachGit(t *testing.T) {
	ctx := context.Background()
	other, otherDir := newRepo(t)
	commit(t, other, map[string]string{"other.txt": "o\n"})
	g, dir := newRepo(t)
	commit(t, g, map[string]string{"mine.txt": "m\n"})
	t.Setenv("GIT_DIR", filepath.Join(otherDir, ".git"))
	t.Setenv("GIT_WORK_TREE", otherDir)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(otherDir, ".git", "index"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'user.name'='Injected'")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "user.email")
	t.Setenv("GIT_CONFIG_VALUE_0", "injected@example.com")
	t.Setenv("GIT_EXTERNAL_DIFF", "false")

	files, err := g.LsFiles(ctx)
	if !slices.Equal(files, []string{"mine.txt"}) || err != nil {
		t.Errorf("LsFiles = %v, %v; want [mine.txt] from %s, not the GIT_DIR repository", files, err, dir)
	}
	for _, key := range []string{"user.name", "user.email"} {
		if v, ok, err := g.ConfigGet(ctx, key); ok || err != nil {
			t.Errorf("ConfigGet(%s) = %q, %v, %v; want unset (the environment's value must not reach git)", key, v, ok, err)
		}
	}
	if out, err := g.Output(ctx, "diff", "HEAD~0"); err != nil || out != "" {
		t.Errorf("diff = %q, %v; want an empty diff, GIT_EXTERNAL_DIFF ignored", out, err)
	}
}

// TestUserConfigurationStillReads: the user's identity and drivers (global scope) apply.
func TestUserConfigurationStillReads(t *testing.T) {
	ctx := context.Background()
	g, dir := newRepo(t)
	home := os.Getenv("HOME")
	marker := filepath.Join(t.TempDir(), "lfs-clean")
	global := "[user]\n\tname = Jane\n\temail = jane@example.com\n[filter \"mine\"]\n\tclean = touch " + marker + "; cat\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(global), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.bin filter=mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commit(t, g, map[string]string{"x.bin": "data\n"})
	if v, _, err := g.ConfigGet(ctx, "user.email"); v != "jane@example.com" || err != nil {
		t.Errorf("ConfigGet(user.email) = %q, %v; want the global identity", v, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the user's own (global) clean filter did not run on add: %v", err)
	}
}

func TestUnoverridableDriverRefused(t *testing.T) {
	ctx := context.Background()
	g, _ := newRepo(t)
	if _, err := g.Run(ctx, "config", "filter.a=b.clean", "touch /nonexistent/x"); err != nil {
		t.Fatal(err)
	}
	_, err := g.Run(ctx, "status")
	if err == nil || !strings.Contains(err.Error(), "cannot override") {
		t.Errorf("status with a driver named filter.a=b: %v; want a refusal", err)
	}
	if _, err := g.LsFiles(ctx); err != nil {
		t.Errorf("ls-files (runs no driver) refused too: %v", err)
	}
}

// TestDiffWithoutExternal: an emptied diff.external leaves git's own diff, not a failure.
func TestDiffWithoutExternal(t *testing.T) {
	ctx := context.Background()
	g, dir := newRepo(t)
	commit(t, g, map[string]string{"a.txt": "one\n"})
	marker := filepath.Join(t.TempDir(), "external")
	script := filepath.Join(t.TempDir(), "ext")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, "config", "diff.external", script); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := g.Output(ctx, "diff")
	if err != nil || !strings.Contains(out, "+two") {
		t.Errorf("diff = %q, %v; want git's own diff", out, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's diff.external ran")
	}
}
