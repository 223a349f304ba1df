//go:build unix

package loop

import (
	"io/fs"
	"syscall"
)

// inode is fi's inode number: a file replaced by a rename has a new one.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // Ino is not uint64 everywhere
	}
	return 0
}
