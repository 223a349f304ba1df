package system

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
	"github.com/reinhq/rein/internal/tool"
)

func TestOpenSandbox(t *testing.T) {
	ws, err := tool.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if sb, err := openSandbox(Options{Home: t.TempDir()}, ws, nil, nil, nil); sb != nil || err != nil {
		t.Errorf("without --sandbox: %v %v", sb, err)
	}
	sandboxtest.New(t, sandbox.Config{Workspace: ws.Dir}) // skips or fails without bwrap
	home := filepath.Join(ws.Dir, "home")
	sb, err := openSandbox(Options{Sandbox: true, Home: home}, ws, nil, nil, nil)
	if err != nil || sb == nil {
		t.Fatalf("openSandbox: %v", err)
	}
	// A workspace the sandbox cannot confine is a configuration error, never a plain run.
	root, err := tool.OpenWorkspace("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := openSandbox(Options{Sandbox: true, Home: home}, root, nil, nil, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("workspace /: %v", err)
	}
}

func TestWorkspaceProtectedHome(t *testing.T) {
	dir := t.TempDir()
	globs := workspaceProtected(Options{Home: filepath.Join(dir, "odd[home]")})
	pp, err := pathrule.NewProtectedPaths(globs, dir)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"odd[home]/trust.json": true, ".git/config": true, "src/a.go": false, "oddh": false} {
		if _, ok := pp.Match(p); ok != want {
			t.Errorf("Match(%q) = %v, want %v", p, ok, want)
		}
	}
}

// gitCmd runs git on the host in dir with only the repository's configuration.
func gitCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestGitProtected: what the repository's configuration names inside the workspace — an
// included configuration file, the hooks directory (even missing), a filter's program, an
// alias's script — is protected in the sandbox, so a command cannot plant what the host's
// git runs; plain values and paths outside the workspace are not.
func TestGitProtected(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitCmd(t, ws, "init", "-q", "-b", "main")
	for f, c := range map[string]string{"shared.gitconfig": "[filter \"x\"]\n\tclean = ./tools/clean.sh --x\n", "tools/clean.sh": "#!/bin/sh\ncat\n",
		"scripts/y.sh": "#!/bin/sh\n", "docs/a.md": "a\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitCmd(t, ws, "config", "include.path", "../shared.gitconfig")
	gitCmd(t, ws, "config", "core.hooksPath", ".husky")
	gitCmd(t, ws, "config", "alias.y", "!scripts/y.sh arg")
	gitCmd(t, ws, "config", "user.name", "docs")
	gitCmd(t, ws, "config", "core.editor", "/usr/bin/vi")
	got := gitProtected(ws)
	if want := []string{".git/config", ".husky", "scripts/y.sh", "shared.gitconfig", "tools/clean.sh"}; !slices.Equal(got, want) {
		t.Errorf("gitProtected = %q, want %q", got, want)
	}
	if got := gitProtected(t.TempDir()); got != nil {
		t.Errorf("outside a repository: %q", got)
	}

	w, err := tool.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sandboxtest.New(t, sandbox.Config{Workspace: ws}) // skips or fails without bwrap
	sb, err := openSandbox(Options{Sandbox: true, Home: t.TempDir()}, w, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "PWNED")
	hook := "printf '#!/bin/sh\\ntouch " + marker + "\\n'"
	failInSandbox(t, sb, ws,
		"mkdir -p .husky && "+hook+" > .husky/pre-commit && chmod +x .husky/pre-commit",
		hook+" > tools/clean.sh",
		"mv tools t2 && mkdir tools && "+hook+" > tools/clean.sh && chmod +x tools/clean.sh",
		"printf '[core]\\n\\thooksPath = h2\\n' >> shared.gitconfig",
		hook+" > scripts/y.sh",
	)
	if err := os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("*.md filter=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, ws, "add", ".")
	gitCmd(t, ws, "commit", "-q", "-m", "x")
	if _, err := os.Stat(marker); err == nil {
		t.Error("a program planted in the sandbox ran on the host")
	}
	if _, err := os.Lstat(filepath.Join(ws, ".husky")); err == nil {
		t.Error(".husky exists on the host")
	}
}

// TestNestedRepositoryProtected: a repository in a subdirectory (and a subdirectory's own
// .rein) is protected in the sandbox like the top-level one: a hook planted in its .git, or
// the .git rebuilt, never runs at the host's next commit there.
func TestNestedRepositoryProtected(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(ws, "vendor", "lib")
	if err := os.MkdirAll(filepath.Join(ws, "pkg", ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, sub, "init", "-q", "-b", "main")
	got, err := nestedProtected(ws)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pkg/.rein", "vendor/lib/.git"}; !slices.Equal(got, want) {
		t.Fatalf("nestedProtected = %q, want %q", got, want)
	}
	w, err := tool.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sandboxtest.New(t, sandbox.Config{Workspace: ws}) // skips or fails without bwrap
	sb, err := openSandbox(Options{Sandbox: true, Home: t.TempDir()}, w, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "PWNED")
	hook := "printf '#!/bin/sh\\ntouch " + marker + "\\n'"
	failInSandbox(t, sb, ws,
		hook+" > vendor/lib/.git/hooks/pre-commit && chmod +x vendor/lib/.git/hooks/pre-commit",
		"mv vendor/lib/.git vendor/lib/.git-old",
		"cd vendor && mv lib lib2",
		"echo '{}' > pkg/.rein/settings.json",
	)
	if err := os.WriteFile(filepath.Join(sub, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, sub, "add", ".")
	gitCmd(t, sub, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "x")
	if _, err := os.Stat(marker); err == nil {
		t.Error("a hook planted in the nested repository ran on the host")
	}
}

// failInSandbox runs each script in the sandbox and fails the test when one succeeds.
func failInSandbox(t *testing.T, sb *sandbox.Sandbox, ws string, scripts ...string) {
	t.Helper()
	for _, script := range scripts {
		p, err := sb.Prepare([]string{"/bin/sh", "-c", script}, ws)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(p.Args[0], p.Args[1:]...)
		cmd.Env = sb.Env(os.Environ())
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%q succeeded in the sandbox:\n%s", script, out)
		}
		p.Release()
	}
}
