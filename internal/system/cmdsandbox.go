package system

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/sandbox"
)

// CommandSandboxes says how a delivery run's approved commands (the writer's run_command,
// the candidate's checks, Ticket and Full Run Verification) get their OS sandbox: nil, nil
// when none is asked for — neither requested (--sandbox) nor the global settings'
// "sandbox" — else a function building the sandbox of a command that runs in workspace (a
// ticket worktree or a clean checkout). It first checks that bubblewrap can build a sandbox
// here: without one the error wraps ErrConfig and sandbox.ErrUnavailable and names the
// package to install, so the run stops before any command and none runs unsandboxed.
//
// Each sandbox makes workspace the only writable directory (with sandbox.DefaultProtect,
// what the repository's git configuration names and nested repositories' entries kept
// read-only, as for the bash tool), hides $REIN_HOME — the workspace lies inside it, so what
// is hidden is every entry beside the path down to the workspace, should $REIN_HOME lie in
// a directory the sandbox shows at all — and shows the host's Go module cache read-only
// (there is no network to fetch modules with).
func CommandSandboxes(home string, requested bool) (func(workspace string) (*sandbox.Sandbox, error), error) {
	global, err := ReadSettings(filepath.Join(home, SettingsFile), true)
	if err != nil {
		return nil, err
	}
	if !requested && !global.Sandbox {
		return nil, nil
	}
	probe, err := os.MkdirTemp("", "rein-sandbox-check-")
	if err != nil {
		return nil, fmt.Errorf("%w: --sandbox: a directory to check the sandbox in: %w", ErrConfig, err)
	}
	defer os.RemoveAll(probe)
	sb, err := sandbox.New(sandbox.Config{Workspace: probe})
	if err == nil {
		err = sb.Check(context.Background())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --sandbox: %w", ErrConfig, err)
	}
	return func(ws string) (*sandbox.Sandbox, error) { return commandSandbox(home, ws) }, nil
}

// commandSandbox builds the sandbox of an approved command that runs in ws.
func commandSandbox(home, ws string) (*sandbox.Sandbox, error) {
	nested, err := nestedProtected(ws)
	if err != nil {
		return nil, err
	}
	protect := slices.Concat(sandbox.DefaultProtect, gitProtected(ws), nested)
	hide, err := hiddenAround(home, ws)
	if err != nil {
		return nil, err
	}
	var ro []string
	if mc := goModCache(); mc != "" && !strings.HasPrefix(mc+string(filepath.Separator), realPath(home)+string(filepath.Separator)) {
		ro = append(ro, mc)
	}
	sb, err := sandbox.New(sandbox.Config{Workspace: ws, ReadOnly: ro, Hide: hide, Protect: protect})
	if err != nil {
		return nil, fmt.Errorf("the OS sandbox of an approved command in %s: %w", ws, err)
	}
	return sb, nil
}

// hiddenAround lists what hides home from a sandbox whose workspace is ws: home itself when
// ws lies outside it, else every entry beside the path from home down to ws (the sandbox
// cannot hide a directory holding its workspace). A path the sandbox does not show needs
// nothing; sandbox.New skips it.
func hiddenAround(home, ws string) ([]string, error) {
	if home == "" {
		return nil, nil
	}
	h, w := realPath(home), realPath(ws)
	rel, err := filepath.Rel(h, w)
	if err != nil || !filepath.IsLocal(rel) {
		return []string{h}, nil
	}
	var hide []string
	dir := h
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("hiding $REIN_HOME from the sandbox: %w", err)
		}
		for _, e := range entries {
			if e.Name() != part {
				hide = append(hide, filepath.Join(dir, e.Name()))
			}
		}
		dir = filepath.Join(dir, part)
	}
	return hide, nil
}

// realPath is p absolute with its symbolic links resolved (as far as it exists).
func realPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// goModCache is the Go module cache as the go command finds it from the environment
// ($GOMODCACHE, else the first $GOPATH entry's pkg/mod, else ~/go/pkg/mod), "" when it does
// not exist.
func goModCache() string {
	mc := os.Getenv("GOMODCACHE")
	if mc == "" {
		gp, _, _ := strings.Cut(os.Getenv("GOPATH"), string(filepath.ListSeparator))
		if gp == "" {
			if h := userHomeDir(); h != "" {
				gp = filepath.Join(h, "go")
			}
		}
		if gp != "" {
			mc = filepath.Join(gp, "pkg", "mod")
		}
	}
	if !filepath.IsAbs(mc) {
		return ""
	}
	if fi, err := os.Stat(mc); err != nil || !fi.IsDir() {
		return ""
	}
	return realPath(mc)
}
