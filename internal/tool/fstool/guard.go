package fstool

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/reinhq/rein/internal/tool"
)

// realPath resolves every symbolic link in the workspace-relative path rel (see
// resolveLinks), turning its failures into messages for the model; shown is the path as the
// model sent it.
func realPath(ws *tool.Workspace, rel, shown string) (string, error) {
	real, err := resolveLinks(ws.Root, rel)
	switch {
	case errors.Is(err, errLinkEscape):
		return "", fmt.Errorf("%w: %q resolves outside the workspace (through a symbolic link); use a path inside it", tool.ErrOutsideWorkspace, shown)
	case errors.Is(err, errLinkLoop):
		return "", fmt.Errorf("%s: %w; use the file's real path", shown, err)
	case err != nil:
		return "", fsError(shown, err)
	}
	return real, nil
}

// guardRead asks the workspace's Guard whether real (rel with its links resolved) may be
// read; rel is the path the call named. links is the hard link count (0: not known or
// not relevant).
func guardRead(ws *tool.Workspace, real, rel string, links uint64) error {
	if ws.Guard == nil {
		return nil
	}
	return ws.Guard.Read(filepath.ToSlash(real), real == rel, links)
}

// listable reports whether a directory tool may show the entry p (workspace-relative, the
// directory part already free of symbolic links): the Guard must let both the entry and,
// for a symbolic link, what it leads to be read. An entry the Guard refuses is left out.
func listable(ws *tool.Workspace, p string) bool {
	if ws.Guard == nil {
		return true
	}
	if ws.Guard.Read(filepath.ToSlash(p), false, 0) != nil {
		return false
	}
	fi, err := ws.Root.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return true
	}
	real, err := resolveLinks(ws.Root, p)
	if err != nil {
		return true // a link leading nowhere or outside: ls and find show it as before
	}
	return ws.Guard.Read(filepath.ToSlash(real), false, 0) == nil
}

// linkCount is the number of hard links of an opened file (0 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// listedDir resolves the directory rel a directory tool lists (ls, find) and asks the
// Guard whether it may be read; it returns the directory's real path.
func listedDir(ws *tool.Workspace, rel, shown string) (string, error) {
	real, err := realPath(ws, rel, shown)
	if err != nil {
		return "", err
	}
	if err := guardRead(ws, real, rel, 0); err != nil {
		return "", err
	}
	return real, nil
}
