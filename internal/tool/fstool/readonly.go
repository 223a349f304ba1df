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

// outsideView returns, for a path p from the model outside the workspace, a workspace over
// the extra root holding it — or, when readOnly allows, the read-only root — and p relative
// to it. The view's Guard is the workspace's, judging the absolute path of each file, so the
// permission rules and a read scope hold there too; an extra root keeps the workspace's
// protected paths (relative ones apply inside it), a read-only root refuses every write.
// Symbolic links are resolved inside the root, as in the workspace: one leading out of it is
// refused.
func outsideView(ws *tool.Workspace, p string, readOnly bool) (*tool.Workspace, string, bool) {
	if len(ws.Extra) == 0 && (!readOnly || len(ws.ReadOnly) == 0) {
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
	writable := true
	r, rel, ok := ws.ExtraRootFor(p)
	if !ok && readOnly {
		r, rel, ok = ws.ReadRootFor(p)
		writable = false
	}
	if !ok {
		return nil, "", false
	}
	view := &tool.Workspace{Dir: r.Dir, Root: r.Root, Protected: []string{}}
	if writable {
		view.Protected = ws.Protected
	}
	if ws.Guard != nil {
		view.Guard = absGuard{dir: filepath.ToSlash(r.Dir), write: writable, next: ws.Guard}
	} else if !writable {
		view.Guard = absGuard{dir: filepath.ToSlash(r.Dir)}
	}
	return view, rel, true
}

// absGuard judges the paths of a root outside the workspace by their absolute path; write
// says the root may be written.
type absGuard struct {
	dir   string
	write bool
	next  tool.Guard
}

func (g absGuard) Read(rel string, named bool, links uint64) error {
	if g.next == nil {
		return nil
	}
	return g.next.Read(path.Join(g.dir, rel), named, links)
}

func (g absGuard) Write(rel string, named bool) error {
	if !g.write {
		return errors.New("a read-only directory is never written")
	}
	if g.next == nil {
		return nil
	}
	return g.next.Write(path.Join(g.dir, rel), named)
}

// inView resolves p (from the model) in ws, or, when it lies outside, in the extra root (and,
// with readOnly, the read-only root) holding it: the workspace to work in and p relative to it.
func inView(ws *tool.Workspace, p string, readOnly bool) (*tool.Workspace, string, error) {
	rel, err := resolve(ws, p)
	if errors.Is(err, tool.ErrOutsideWorkspace) {
		if view, vrel, ok := outsideView(ws, p, readOnly); ok {
			return view, vrel, nil
		}
	}
	return ws, rel, err
}

// viewFor is the workspace a call on p works in: ws, or the extra root (with readOnly, also
// the read-only root) holding p when p lies outside ws.
func viewFor(ws *tool.Workspace, p string, readOnly bool) *tool.Workspace {
	if v, _, err := inView(ws, p, readOnly); err == nil {
		return v
	}
	return ws
}
