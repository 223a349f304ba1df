//go:build !linux

package proc

import (
	"errors"
	"syscall"
)

// Without /proc there is no process table to sweep: [Spec.Contain] falls back to the group
// kill, and journals of dead rein processes are removed without a sweep.

type procInfo struct{}

func selfStart() uint64 { return 0 }

// running reports whether pid runs; start cannot be checked here.
func running(pid int, _ uint64) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func sweep(selector) []Ended { return nil }

func exitWatch(int) <-chan struct{} { return nil }

func groupOf(int) group { return group{} }
