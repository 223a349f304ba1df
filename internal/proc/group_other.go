//go:build !linux

package proc

import "syscall"

// groupAttr puts the process in a new process group. Only Linux has a parent-death signal.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
