package sandbox

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// git runs git on the host in dir, with an environment that ignores the user's own
// configuration, and fails the test when it fails.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// tree lists every path below dir with its mode, and the content of regular files.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := strings.TrimPrefix(p, dir) + " " + fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + string(b)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoPersistence: a sandboxed command cannot leave behind anything the host runs later —
// no hook through a rebuilt, renamed or edited .git, no core.hooksPath, no rein, Claude or
// MCP configuration, no skill — and the host's tree is unchanged afterwards (placeholders
// for the missing entries are gone). A real git commit on the host proves no hook ran.
func TestNoPersistence(t *testing.T) {
	requireBwrap(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(filepath.Dir(ws), "PWNED")
	t.Cleanup(func() { os.Remove(marker) })
	git(t, ws, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, ws, "add", "a.txt")
	git(t, ws, "commit", "-q", "-m", "first")
	before := tree(t, ws)

	s := newSandbox(t, Config{Workspace: ws})
	hook := `printf '#!/bin/sh\ntouch ` + marker + `\n'`
	attempts := map[string]string{
		"rebuild .git":        "mv .git .git-old && git init -q && " + hook + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"copy and swap .git":  "cp -r .git /tmp/g && " + hook + " > /tmp/g/hooks/pre-commit && chmod +x /tmp/g/hooks/pre-commit && rm -rf .git && cp -r /tmp/g .git",
		"write a hook":        hook + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"hooks path":          "git config core.hooksPath hooks2 && mkdir hooks2 && " + hook + " > hooks2/pre-commit && chmod +x hooks2/pre-commit",
		"fsmonitor":           "printf '[core]\\n\\tfsmonitor = touch " + marker + "\\n' >> .git/config",
		"info attributes":     "echo '* filter=x' > .git/info/attributes",
		"rein settings":       "mkdir -p .rein && echo '{\"hooks\":{}}' > .rein/settings.json",
		"rein as a file":      "echo x > .rein",
		"claude settings":     "mkdir -p .claude && echo '{}' > .claude/settings.json",
		"mcp servers":         `echo '{"mcpServers":{}}' > .mcp.json`,
		"skill":               "mkdir -p .agents/skills/x && echo x > .agents/skills/x/SKILL.md",
		"placeholder removed": "rmdir .claude || mv .claude c2",
		"worktree git file":   "rm -rf .git; echo 'gitdir: /tmp' > .git",
	}
	for name, script := range attempts {
		if out, code := sh(t, s, script); code == 0 {
			t.Errorf("%s: %q succeeded inside the sandbox:\n%s", name, script, out)
		}
	}
	if out, code := sh(t, s, "git status --short && git log --oneline | grep -q first && echo ok > b.txt"); code != 0 {
		t.Errorf("reading the repository and writing the workspace failed:\n%s", out)
	}

	// The host: nothing changed but b.txt, and a real commit runs no planted hook.
	after := tree(t, ws)
	want := slices.Clone(before)
	want = append(want, "/b.txt -rw-r--r-- ok\n")
	slices.Sort(want)
	slices.Sort(after)
	if !slices.Equal(after, want) {
		t.Errorf("the host's tree changed:\n got %q\nwant %q", after, want)
	}
	git(t, ws, "add", "b.txt")
	git(t, ws, "commit", "-q", "-m", "second")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook planted inside the sandbox ran on the host")
	}
	for _, p := range []string{".git-old", ".rein", ".claude", ".mcp.json", ".agents", "hooks2", ".git/hooks/pre-commit"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s exists on the host", p)
		}
	}
}

// TestPlaceholders: a missing protected entry is held by a placeholder while any command
// holds it, across Prepare calls, and removed after the last; one left behind by a killed rein
// is taken over; one the host filled meanwhile stays.
func TestPlaceholders(t *testing.T) {
	requireBwrap(t)
	ws := t.TempDir()
	s, err := New(Config{Workspace: ws, Protect: []string{".rein"}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(ws, ".rein")
	a, err := s.Prepare([]string{"true"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Prepare([]string{"true"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() || fi.Mode().Perm() != placeholderMode {
		t.Fatalf("no placeholder while prepared: %v %v", fi, err)
	}
	a.Release()
	if _, err := os.Lstat(p); err != nil {
		t.Fatal("the placeholder was removed while another command held it")
	}
	b.Release()
	b.Release()
	if _, err := os.Lstat(p); err == nil {
		t.Fatal("the placeholder outlived its last holder")
	}

	// Left behind by a rein that was killed.
	if err := os.Mkdir(p, placeholderMode); err != nil {
		t.Fatal(err)
	}
	c, err := s.Prepare([]string{"true"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if _, err := os.Lstat(p); err == nil {
		t.Error("a stale placeholder was not removed")
	}

	// The host put something inside meanwhile: it stays.
	d, err := s.Prepare([]string{"true"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "SYSTEM.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Release()
	if _, err := os.Stat(filepath.Join(p, "SYSTEM.md")); err != nil {
		t.Errorf("the host's file went: %v", err)
	}
}

// TestNestedProtect: the directories on the way to a nested protected path stay writable but
// cannot be renamed away, and a symbolic link on the way is refused.
func TestNestedProtect(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "tools/hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, Config{Workspace: ws, Protect: []string{"tools/hooks", "missing/deep"}})
	for script, ok := range map[string]bool{
		"echo x > tools/other":                       true,
		"echo x > tools/hooks/pre-commit":            false,
		"mv tools tools2":                            false,
		"rm -rf tools/hooks":                         false,
		"mkdir -p missing/deep":                      false,
		"mkdir -p elsewhere && echo y > elsewhere/y": true,
	} {
		if out, code := sh(t, s, script); (code == 0) != ok {
			t.Errorf("%q: exit %d, want success %v\n%s", script, code, ok, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "missing")); err == nil {
		t.Error("the placeholder of missing/ was left behind")
	}
	if err := os.Symlink("tools", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Workspace: ws, Protect: []string{"link/hooks"}}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a protected path through a symbolic link: %v", err)
	}
}
