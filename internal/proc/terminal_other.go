//go:build !linux

package proc

import (
	"os"
	"syscall"
)

// foreground is a no-op outside Linux: the process runs in its own background group there,
// and [Spec.Terminal] only documents the intent.
func foreground(*syscall.SysProcAttr, *os.File) func() { return func() {} }
