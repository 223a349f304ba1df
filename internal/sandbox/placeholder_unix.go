//go:build unix

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/reinhq/rein/internal/filelock"
)

// placeholder is a held placeholder directory: f is open on it with a shared flock, one per
// sandboxed command that mounts it.
type placeholder struct {
	path string
	f    *os.File
}

// holdPlaceholder creates the placeholder at path, or joins the one there, and takes a shared
// lock on it. It returns nil (and no error) when path holds something other than a
// placeholder. A placeholder removed while this waited for its lock is created again.
func holdPlaceholder(path string) (*placeholder, error) {
	for range 10 {
		err := os.Mkdir(path, placeholderMode)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if err == nil {
			if err := os.Chmod(path, placeholderMode); err != nil { // whatever the umask took
				return nil, err
			}
		}
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile
		case errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP):
			return nil, nil
		case err != nil:
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil || !isPlaceholder(path, fi) {
			f.Close()
			return nil, err
		}
		if err := filelock.Flock(f, syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, err
		}
		// The holder that removed it last had the lock: check that it is still there.
		if cur, err := os.Lstat(path); err == nil && os.SameFile(fi, cur) {
			return &placeholder{path: path, f: f}, nil
		}
		f.Close()
	}
	return nil, errors.New("it was removed and created again too often")
}

// release drops the shared lock; when no other command holds the placeholder (the exclusive
// lock is free), it removes it. A placeholder that is no longer empty is left alone.
func (h *placeholder) release() {
	defer h.f.Close()
	if filelock.Flock(h.f, syscall.LOCK_UN) != nil || filelock.Flock(h.f, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // another holder removes it when it is done
	}
	fi, err1 := h.f.Stat()
	cur, err2 := os.Lstat(h.path)
	if err1 == nil && err2 == nil && os.SameFile(fi, cur) && isPlaceholder(h.path, cur) {
		os.Remove(h.path) // rmdir: fails, harmlessly, if something was put inside meanwhile
	}
}
