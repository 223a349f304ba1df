package fstool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// DefaultProtected lists the paths write and edit refuse when [tool.Workspace.Protected] is
// nil: [pathrule.DefaultProtected] (.git internals, .rein policy files) plus
// [pathrule.StoreProtected] (session ledgers, their locks and blob stores). The globs are
// matched by [pathrule.ProtectedPaths], the same matcher the permission rules use.
var DefaultProtected = slices.Concat(pathrule.DefaultProtected, pathrule.StoreProtected)

// maxLinkHops bounds symbolic link resolution, as Linux does.
const maxLinkHops = 40

var (
	errLinkEscape = errors.New("a symbolic link leads outside the workspace")
	errLinkLoop   = errors.New("too many levels of symbolic links")
)

// writeTarget decides whether the workspace-relative path rel may be written and returns
// the path to write: rel with every symbolic link resolved. Both the path as given and the
// resolved one are checked against the protected paths, so a link inside the workspace
// cannot lead a write into .git, and the resolved one is judged by the workspace's Guard
// (the permission rules), so a link cannot lead a write into a denied directory. shown is
// the path as the model sent it.
func writeTarget(ws *tool.Workspace, rel, shown string) (string, error) {
	real, err := realPath(ws, rel, shown)
	if err != nil {
		return "", err
	}
	globs := ws.Protected
	if globs == nil {
		globs = DefaultProtected
	}
	pp, err := pathrule.NewProtectedPaths(globs, ws.Dir)
	if err != nil {
		return "", fmt.Errorf("the workspace's protected paths are invalid, so nothing is written (fix the configuration): %w", err)
	}
	if err := pp.Check(rel, shown); err != nil {
		return "", err
	}
	if real != rel {
		if err := pp.Check(real, fmt.Sprintf("%s (a symbolic link to %s)", shown, filepath.ToSlash(real))); err != nil {
			return "", err
		}
	}
	if ws.Guard != nil {
		if err := ws.Guard.Write(filepath.ToSlash(real), real == rel); err != nil {
			return "", err
		}
	}
	return real, nil
}

// resolveLinks resolves every symbolic link in the clean, workspace-relative path rel,
// reading the links through root, and returns the resulting workspace-relative path. The
// part of the path that does not exist yet is kept as written. A link that is absolute or
// climbs above the root is errLinkEscape (os.Root would refuse it too).
func resolveLinks(root *os.Root, rel string) (string, error) {
	pending := splitRel(rel)
	var done []string
	hops := 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", errLinkEscape
			}
			done = done[:len(done)-1]
			continue
		}
		cur := filepath.Join(append(slices.Clone(done), name)...)
		fi, err := root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing below a missing name exists: the rest stays as written.
			out := filepath.Join(append(append(slices.Clone(done), name), pending...)...)
			if out == ".." || strings.HasPrefix(out, ".."+string(filepath.Separator)) {
				return "", errLinkEscape
			}
			return out, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, name)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", errLinkLoop
		}
		target, err := root.Readlink(cur)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			return "", errLinkEscape
		}
		pending = append(splitRel(target), pending...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return filepath.Join(done...), nil
}

func splitRel(p string) []string { return strings.Split(filepath.ToSlash(p), "/") }

// writeRegular replaces the content of the regular file at rel (creating it when missing).
// The file is opened without following a final symbolic link and without blocking on a
// FIFO, and checked on the open descriptor, so what is checked is what is written: a file
// that is not regular is refused, and so is one with more than one hard link (writing it
// would change every other name of it, which may lie outside the workspace).
func writeRegular(ws *tool.Workspace, rel, shown string, data []byte) error {
	f, err := ws.Root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("%s became a symbolic link while it was being written; nothing was written, try again", shown)
		}
		if errors.Is(err, syscall.ENXIO) {
			return fmt.Errorf("%s is not a regular file (a FIFO); the file tools only handle regular files", shown)
		}
		return fsError(shown, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fsError(shown, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s); the file tools only handle regular files", shown, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return &refusal.Error{Code: pathrule.CodeHardLinked, Message: fmt.Sprintf(
			"%s has %d hard links: writing it would also change its other names, which may lie outside the workspace or in protected paths, so nothing was written; leave it alone, or remove this name first (rm %s) and write a new file in its place",
			shown, st.Nlink, shown)}
	}
	if err := f.Truncate(0); err != nil {
		return fsError(shown, err)
	}
	if _, err := f.Write(data); err != nil {
		return fsError(shown, err)
	}
	return f.Close()
}
