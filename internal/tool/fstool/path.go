package fstool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/tool"
)

// resolve turns a path from the model into a path relative to the workspace. Beyond
// [tool.Workspace.Rel] (leading "@", absolute paths inside the workspace, no ".."), unusual
// space characters become plain spaces and "~" or "~/..." is expanded to the home directory
// (which is then refused unless it lies inside the workspace).
func resolve(ws *tool.Workspace, p string) (string, error) {
	p = pathrule.PlainSpaces(p)
	if t := strings.TrimSpace(p); t == "~" || strings.HasPrefix(t, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(t, "~"))
		}
	}
	return ws.Rel(p)
}

// fsError rewrites an error from the workspace root into a message for the model, keeping
// the cause for errors.Is. Escapes through symbolic links become [tool.ErrOutsideWorkspace].
func fsError(path string, err error) error {
	if isEscape(err) {
		return fmt.Errorf("%w: %q resolves outside the workspace (through a symbolic link); use a path inside it", tool.ErrOutsideWorkspace, path)
	}
	switch {
	case errors.Is(err, tool.ErrOutsideWorkspace):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", errNotFound, path)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s: a component of the path is a file, not a directory: %w", path, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied: %w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// isEscape reports whether err comes from an [os.Root] refusing a path that leads outside it
// (os does not export that error, only its text).
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

var errNotFound = errors.New("path not found")

// pathLocks serializes mutations (write, edit) of the same file. Keys are absolute paths
// (workspace directory joined with the cleaned relative path), so tools built on different
// Workspace values for the same directory share locks. Two different names for one file
// (through a symbolic link) are not recognized as the same file.
var pathLocks = struct {
	sync.Mutex
	m map[string]*pathLock
}{m: map[string]*pathLock{}}

type pathLock struct {
	ch   chan struct{}
	refs int
}

// lockPath waits until no other mutation of key is running, or ctx is done. The returned
// function releases the lock.
func lockPath(ctx context.Context, key string) (func(), error) {
	pathLocks.Lock()
	l := pathLocks.m[key]
	if l == nil {
		l = &pathLock{ch: make(chan struct{}, 1)}
		pathLocks.m[key] = l
	}
	l.refs++
	pathLocks.Unlock()

	drop := func() {
		pathLocks.Lock()
		l.refs--
		if l.refs == 0 {
			delete(pathLocks.m, key)
		}
		pathLocks.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; drop() }, nil
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
}

func lockKey(ws *tool.Workspace, rel string) string { return filepath.Join(ws.Dir, rel) }

// checkFile fails unless rel names a regular file (following symbolic links inside the
// workspace): opening a FIFO or device would block or never end.
func checkFile(ws *tool.Workspace, rel, shown string) error {
	st, err := ws.Root.Stat(rel)
	if err != nil {
		return fsError(shown, err)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory; use ls to list it", shown)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s); the file tools only handle regular files", shown, st.Mode().Type())
	}
	return nil
}
