package ledger

import (
	"github.com/reinhq/rein/internal/filelock"

	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
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
	f, err := openPlain(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// openPlain is os.OpenFile for the ledger's regular files and directories, which the runtime's
// poller cannot watch: os.OpenFile tries to register every descriptor with it (four fcntls and
// an epoll_ctl that fails with EPERM on a regular file); a plain blocking descriptor skips
// that. Errors are *fs.PathError, as os.OpenFile's.
func openPlain(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case err != syscall.EINTR:
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// Mkdir implements FS.
func (OSFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// SyncDir implements FS. Directories are opened read-only: O_WRONLY fails on Linux.
func (OSFS) SyncDir(name string) error {
	d, err := openPlain(name, os.O_RDONLY, 0)
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

// Lock implements FS with flock(2): the kernel releases it when the holder dies, including by
// SIGKILL. One descriptor ([openPlain]) opens (creating) the file, takes the lock and, once it
// holds it, truncates the file and writes the pid; closing it releases the lock.
func (OSFS) Lock(name string) (io.Closer, error) {
	f, err := openPlain(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	err = filelock.Flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == syscall.EWOULDBLOCK:
		f.Close()
		return nil, &LockedError{Path: name, PID: readPID(name)}
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("lock %s: flock: %w", name, err)
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: write pid: %w", name, err)
	}
	return f, nil
}

// writePID replaces the lock file's content with this process's pid.
func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Write([]byte(strconv.Itoa(os.Getpid()) + "\n"))
	return err
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
