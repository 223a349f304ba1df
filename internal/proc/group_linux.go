package proc

import "syscall"

// groupAttr puts the process in a new process group and has the kernel send it SIGKILL
// when the thread that started it ends (rein dies).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
