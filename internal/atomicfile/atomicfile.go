// Package atomicfile writes files so that a crash leaves either the old content or the new,
// never a mix: a temporary file in the same directory is written and fsynced, renamed over the
// target, and the directory is fsynced so the rename itself is durable. [Replace] is the same
// without the fsyncs, for files that only describe running processes.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data, created with perm. On any error the target is untouched and
// the temporary file removed.
func Write(path string, data []byte, perm os.FileMode) error {
	if err := replace(path, data, perm, true); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// Replace is [Write] without the fsyncs: readers and a crash of this process (the kernel keeps
// what was written) see the old content or the new, never a mix, but a power loss may leave
// either or neither. It is for files that describe live processes, which a power loss ends
// anyway (the process journal): two fsyncs there were most of the cost of starting a process.
func Replace(path string, data []byte, perm os.FileMode) error {
	return replace(path, data, perm, false)
}

// replace writes data to a temporary file beside path (fsynced when sync) and renames it
// over path.
func replace(path string, data []byte, perm os.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		var n int
		n, err = f.Write(data)
		if err == nil && n != len(data) {
			err = io.ErrShortWrite
		}
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// SyncDir makes the entries of directory name durable. Directories are opened read-only:
// O_WRONLY fails on Linux.
func SyncDir(name string) error {
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
