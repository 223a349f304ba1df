package system

import (
	"context"
	"fmt"
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
// cannot be read. Besides sandbox.DefaultProtect, what the repository's git configuration
// names inside the workspace (gitProtected) is protected. Without a working bwrap the
// run stops with ErrConfig (exit 2) and a message naming the package to install: commands
// are never run unsandboxed instead.
func openSandbox(o Options, ws *tool.Workspace, masks []string) (*sandbox.Sandbox, error) {
	if !o.Sandbox {
		return nil, nil
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
	nested, err := nestedProtected(ws.Dir)
	if err != nil {
		return nil, err
	}
	protect := slices.Concat(sandbox.DefaultProtect, gitProtected(ws.Dir), nested)
	sb, err := sandbox.New(sandbox.Config{Workspace: ws.Dir, Hide: hide, Mask: masks, Protect: protect})
	if err == nil {
		err = sb.Check(context.Background())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --sandbox: %w", ErrConfig, err)
	}
	return sb, nil
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
