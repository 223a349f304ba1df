package filelock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Flock applies how (syscall.LOCK_SH, LOCK_EX or LOCK_UN, with LOCK_NB not to wait) to f,
// retrying when a signal interrupts the call. A lock another holder has, under LOCK_NB, is
// syscall.EWOULDBLOCK.
func Flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Hold opens the lock file at path (creating it, 0600) and waits for its exclusive lock; closing
// the result releases it. The file's content is not touched.
func Hold(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := Flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: flock: %w", path, err)
	}
	return f, nil
}
