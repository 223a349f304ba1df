package system

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
)

// openSandbox builds and checks the OS sandbox of a run with Options.Sandbox set (nil
// otherwise). The workspace is the only writable directory; $REIN_HOME, and a session
// directory given by path, stay hidden when they lie inside it, and masks (see readMasks)
// cannot be read; readOnly (the skill directories outside the workspace) are visible
// read-only, writable (the additional directories) writable. Besides sandbox.DefaultProtect, what the repository's git configuration
// names inside the workspace (gitProtected) is protected. Without a working bwrap the
// run stops with ErrConfig (exit 2) and a message naming the package to install: commands
// are never run unsandboxed instead.
func openSandbox(o Options, ws *tool.Workspace, masks, readOnly, writable []string) (*sandbox.Sandbox, error) {
	if !o.Sandbox {
		return nil, nil
	}
	hide := sandboxHidden(o)
	nested, err := nestedProtected(ws.Dir)
	if err != nil {
		return nil, err
	}
	protect := slices.Concat(sandbox.DefaultProtect, gitProtected(ws.Dir), nested)
	sb, err := sandbox.New(sandbox.Config{Workspace: ws.Dir, ReadOnly: readOnly, Writable: writable, Hide: hide, Mask: masks, Protect: protect})
	if err == nil {
		err = sb.Check(context.Background())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --sandbox: %w", ErrConfig, err)
	}
	return sb, nil
}

// sandboxHidden lists what the sandbox of a run of o hides (nil without --sandbox):
// $REIN_HOME, and a session directory given by path.
func sandboxHidden(o Options) []string {
	if !o.Sandbox {
		return nil
	}
	var hide []string
	if o.Home != "" && !ticketWorkspace(o.Home, o.Dir) {
		if h, err := filepath.Abs(o.Home); err == nil {
			hide = append(hide, h)
		}
	}
	if o.Session.Mode == SessionAt {
		if d, err := filepath.Abs(strings.TrimSuffix(o.Session.Ref, "/ledger.jsonl")); err == nil {
			hide = append(hide, d)
		}
	}
	return hide
}

// userHomeDir is the user's home directory, for Claude Code's and other agents' files
// (~/.claude/CLAUDE.md, ~/.agents/skills, ~/.claude/skills); "" when unknown.
func userHomeDir() string {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return ""
	}
	return h
}

// workspaceProtected is the list of paths the file tools refuse to write: their default
// plus $REIN_HOME, should it lie inside the workspace.
func workspaceProtected(o Options) []string {
	globs := slices.Clone(fstool.DefaultProtected)
	if o.Home != "" && !ticketWorkspace(o.Home, o.Dir) {
		if h, err := filepath.Abs(o.Home); err == nil {
			globs = append(globs, pathrule.EscapeGlob(filepath.ToSlash(h)))
		}
	}
	return globs
}
