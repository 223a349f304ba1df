package tool

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// OutsideView returns, for a path p from the model outside the workspace, a workspace over
// the extra root holding it — or, when readOnly allows, the read-only root — and p relative
// to it. The view's Guard is the workspace's, judging the absolute path of each file, so the
// permission rules and a read scope hold there too; an extra root keeps the workspace's
// protected paths (relative ones apply inside it), a read-only root refuses every write.
// Symbolic links are resolved inside the root, as in the workspace: one leading out of it is
// refused. p is taken as the model wrote it ("@" and "~/" allowed), its unusual spaces made
// plain by the caller (pathrule.PlainSpaces); the tools that take paths outside the workspace
// (read, write, edit, ls, find, grep) all come through here.
func (ws *Workspace) OutsideView(p string, readOnly bool) (*Workspace, string, bool) {
	if len(ws.Extra) == 0 && (!readOnly || len(ws.ReadOnly) == 0) {
		return nil, "", false
	}
	p = strings.TrimPrefix(strings.TrimSpace(p), "@")
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
	view := &Workspace{Dir: r.Dir, Root: r.Root, Protected: []string{}}
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
	next  Guard
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
