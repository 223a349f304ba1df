package fstool

import (
	"errors"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/tool"
)

// inView resolves p (from the model) in ws, or, when it lies outside, in the extra root (and,
// with readOnly, the read-only root) holding it: the workspace to work in and p relative to it.
func inView(ws *tool.Workspace, p string, readOnly bool) (*tool.Workspace, string, error) {
	rel, err := resolve(ws, p)
	if errors.Is(err, tool.ErrOutsideWorkspace) {
		if view, vrel, ok := ws.OutsideView(pathrule.PlainSpaces(p), readOnly); ok {
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
