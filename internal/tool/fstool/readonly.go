package fstool

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/tool"
)

// readOnlyView returns, for a path p from the model that lies outside the workspace but in
// one of its read-only roots ([tool.Workspace.ReadOnly]), a workspace over that root and p
// relative to it. The view has no protected paths (nothing writes through it) and its Guard
// is the workspace's, judging the absolute path of each file, so the permission rules and a
// read scope hold there too. Symbolic links are resolved inside the root, as in the
// workspace: one leading out of it is refused.
func readOnlyView(ws *tool.Workspace, p string) (*tool.Workspace, string, bool) {
	if len(ws.ReadOnly) == 0 {
		return nil, "", false
	}
	p = strings.TrimPrefix(strings.TrimSpace(pathrule.PlainSpaces(p)), "@")
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, "", false
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	r, rel, ok := ws.ReadRootFor(p)
	if !ok {
		return nil, "", false
	}
	view := &tool.Workspace{Dir: r.Dir, Root: r.Root, Protected: []string{}}
	if ws.Guard != nil {
		view.Guard = absGuard{dir: filepath.ToSlash(r.Dir), next: ws.Guard}
	}
	return view, rel, true
}

// absGuard judges the paths of a read-only root by their absolute path.
type absGuard struct {
	dir  string
	next tool.Guard
}

func (g absGuard) Read(rel string, named bool, links uint64) error {
	return g.next.Read(path.Join(g.dir, rel), named, links)
}

func (g absGuard) Write(string, bool) error {
	return errors.New("a read-only directory is never written")
}
