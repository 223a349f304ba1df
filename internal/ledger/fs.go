package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/gofrs/flock"
)

// FS is every filesystem effect the ledger has. Production uses [OSFS]; tests substitute a
// simulated filesystem to inject faults and power loss (see package ledgertest).
type FS interface {
	// OpenFile is os.OpenFile. The ledger uses O_RDONLY, O_WRONLY|O_APPEND and
	// O_WRONLY|O_CREATE|O_EXCL (with or without O_APPEND).
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Mkdir is os.Mkdir; it fails with an error matching fs.ErrExist or fs.ErrNotExist as os does.
	Mkdir(name string, perm fs.FileMode) error
	// Rename is os.Rename (an atomic replace on Unix).
	Rename(oldpath, newpath string) error
	// Remove is os.Remove.
	Remove(name string) error
	// SyncDir makes the entries of directory name durable (open it read-only, fsync).
	SyncDir(name string) error
	// Lock takes the exclusive, non-blocking writer lock on the file name, writing this process's
	// pid into it. A held lock fails with an error wrapping ErrLocked (a *LockedError). The lock
	// lasts until the returned Closer is closed or the process dies.
	Lock(name string) (io.Closer, error)
}

// File is the part of *os.File the ledger uses.
type File interface {
	io.Reader
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// OSFS is the real filesystem.
type OSFS struct{}

var _ FS = OSFS{}

// OpenFile implements FS.
func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Mkdir implements FS.
func (OSFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// SyncDir implements FS. Directories are opened read-only: O_WRONLY fails on Linux.
func (OSFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("fsync directory %s: %w", name, serr)
	}
	return cerr
}

// Lock implements FS with flock(2) (github.com/gofrs/flock): the kernel releases it when the
// holder dies, including by SIGKILL. The pid is written through a second descriptor after the
// lock is taken; closing that descriptor does not release a flock lock.
func (OSFS) Lock(name string) (io.Closer, error) {
	fl := flock.New(name, flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return nil, &LockedError{Path: name, PID: readPID(name)}
	}
	if err := writePID(name); err != nil {
		_ = fl.Unlock()
		return nil, fmt.Errorf("lock %s: write pid: %w", name, err)
	}
	return lockCloser{fl}, nil
}

type lockCloser struct{ fl *flock.Flock }

func (c lockCloser) Close() error { return c.fl.Unlock() }

func writePID(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(strconv.Itoa(os.Getpid()) + "\n"))
	cerr := f.Close()
	return errors.Join(werr, cerr)
}

// readPID reads the holder's pid from a lock file; 0 if it cannot.
func readPID(name string) int {
	b, err := os.ReadFile(name)
	if err != nil || len(b) > 32 {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
