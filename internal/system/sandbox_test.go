package system

import (
	"errors"
	"path/filepath"
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
	if sb, err := openSandbox(Options{Home: t.TempDir()}, ws, nil); sb != nil || err != nil {
		t.Errorf("without --sandbox: %v %v", sb, err)
	}
	sandboxtest.New(t, sandbox.Config{Workspace: ws.Dir}) // skips or fails without bwrap
	home := filepath.Join(ws.Dir, "home")
	sb, err := openSandbox(Options{Sandbox: true, Home: home}, ws, nil)
	if err != nil || sb == nil {
		t.Fatalf("openSandbox: %v", err)
	}
	// A workspace the sandbox cannot confine is a configuration error, never a plain run.
	root, err := tool.OpenWorkspace("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := openSandbox(Options{Sandbox: true, Home: home}, root, nil); !errors.Is(err, ErrConfig) {
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
