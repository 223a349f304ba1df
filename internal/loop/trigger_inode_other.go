//go:build !unix

package loop

import "io/fs"

// inode is 0 where the OS offers none: size, mtime and mode still tell changes.
func inode(fs.FileInfo) uint64 { return 0 }
