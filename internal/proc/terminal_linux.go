package proc

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// foreground makes the process's group the foreground group of tty, the terminal rein
// runs on, when tty is rein's controlling terminal ([Spec.Terminal]); the function it
// returns gives the terminal back to the group that had it. A process in a background
// group is stopped (SIGTTIN, SIGTTOU) the moment it reads the terminal or sets its modes,
// as every editor does.
func foreground(attr *syscall.SysProcAttr, tty *os.File) (restore func()) {
	if tty == nil {
		return func() {}
	}
	fd := tty.Fd()
	var pgrp int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp))); errno != 0 {
		return func() {} // not rein's controlling terminal: nothing to hand over
	}
	attr.Foreground, attr.Ctty = true, int(fd)
	return func() {
		// rein's group is in the background now: taking the terminal back would stop it
		// with SIGTTOU unless the signal is ignored for the call.
		if !signal.Ignored(syscall.SIGTTOU) {
			signal.Ignore(syscall.SIGTTOU)
			defer signal.Reset(syscall.SIGTTOU)
		}
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&pgrp)))
	}
}
