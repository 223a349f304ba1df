package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
)

// hostGit runs git on the host in dir with only the repository's own configuration.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestSandboxLeavesNothingToRunLater drives `rein --sandbox` in a trusted git repository
// without .rein/ with a model that tries every way to plant something the host runs later: a
// rebuilt .git with a hook, a hook written directly, core.hooksPath, rein, Claude and MCP
// configuration, a skill. Afterwards a real `git commit` on the host runs no planted hook, none
// of the files exists, and the next rein run loads nothing new.
func TestSandboxLeavesNothingToRunLater(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.New(t, sandbox.Config{Workspace: dir}) // skips or fails without bwrap
	marker := filepath.Join(t.TempDir(), "PWNED")
	t.Chdir(dir)
	t.Setenv("REIN_HOME", filepath.Join(t.TempDir(), "home"))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	hostGit(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile("a.txt", []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostGit(t, dir, "add", "a.txt")
	hostGit(t, dir, "commit", "-q", "-m", "first")
	if _, stderr, code := runRein(t, "trust", "--allow"); code != 0 {
		t.Fatalf("trust: %s", stderr)
	}

	hook := `printf '#!/bin/sh\ntouch ` + marker + `\n'`
	attempts := []string{
		"mv .git .git-old && git init -q && " + hook + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		hook + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"git config core.hooksPath hooks2 && mkdir -p hooks2 && " + hook + " > hooks2/pre-commit && chmod +x hooks2/pre-commit",
		`mkdir -p .rein && echo '{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch ` + marker + `"}]}]}}' > .rein/settings.json`,
		`mkdir -p .claude && echo '{"hooks": {}}' > .claude/settings.json`,
		`echo '{"mcpServers": {"x": {"command": "touch"}}}' > .mcp.json`,
		"mkdir -p .agents/skills/x && printf -- '---\\nname: x\\ndescription: x\\n---\\n' > .agents/skills/x/SKILL.md",
		"echo made > made.txt",
	}
	// Each attempt is a script the model writes first and then runs, so no command rule or
	// protected-path check sees what it does: only the sandbox stands in the way.
	// The scripts are written in one turn and run in the next: calls of one turn may run
	// concurrently, so a script could otherwise run before it is written.
	var writes, runs []any
	for i, a := range attempts {
		name := fmt.Sprintf("p%d.sh", i)
		writes = append(writes, map[string]any{"name": "write", "args": map[string]any{"path": name, "content": a + "\n"}})
		runs = append(runs, map[string]any{"name": "bash", "args": map[string]any{"command": "sh " + name}})
	}
	scenario := `{"version": 1, "turns": [{"calls": ` + mustJSON(t, writes) + `}, {"calls": ` + mustJSON(t, runs) + `}, {"text": "done"}]}`
	script := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(script, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runRein(t, "--sandbox", "--script", script, "--no-session", "-p", "plant"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}

	for _, p := range []string{".git-old", ".git/hooks/pre-commit", "hooks2", ".rein", ".claude", ".mcp.json", ".agents"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists on the host after the sandboxed run", p)
		}
	}
	if b, err := os.ReadFile("made.txt"); err != nil || string(b) != "made\n" {
		t.Errorf("the workspace was not writable in the sandbox: %q %v", b, err)
	}
	hostGit(t, dir, "add", ".")
	hostGit(t, dir, "commit", "-q", "-m", "second")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook planted inside the sandbox ran on the host's git commit")
	}
	if cfg, err := os.ReadFile(".git/config"); err != nil || strings.Contains(strings.ToLower(string(cfg)), "hookspath") {
		t.Errorf(".git/config: %q %v", cfg, err)
	}
	if log := hostGit(t, dir, "log", "--format=%s"); log != "second\nfirst\n" {
		t.Errorf("the repository's history changed: %q", log)
	}
	// The next run loads nothing planted (and no hook runs).
	ok := filepath.Join(t.TempDir(), "ok.yaml")
	if err := os.WriteFile(ok, []byte(`{"version": 1, "turns": [{"text": "fine"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runRein(t, "--script", ok, "--no-session", "-p", "hi"); code != 0 || out != "fine\n" || stderr != "" {
		t.Errorf("next run: exit %d, %q, %q", code, out, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a planted rein hook ran")
	}
}
