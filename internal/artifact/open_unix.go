//go:build unix

package artifact

import (
	"os"
	"syscall"
)

// openFlags opens without blocking, so that a pipe swapped in for an artifact is refused as
// not regular instead of hanging the open.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
