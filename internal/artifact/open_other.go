//go:build !unix

package artifact

import "os"

const openFlags = os.O_RDONLY
