//go:build !linux

package lease

import (
	"os"
	"syscall"
)

// ProcessStart gives no start time outside Linux: liveness is the pid alone.
func ProcessStart(int) (string, error) { return "", errNoStartTime }

// signalZero reports whether process pid exists.
func signalZero(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
