package proc

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Subreap makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a process
// that any of its descendants leaves behind when it exits is reparented to this process
// instead of init, so a sweep still finds it below rein. It starts the reaper that waits for
// those adopted orphans once they exit. The setting is process-wide: call it once, from
// main, in a process whose every child is started by [Run] (a child started otherwise would
// look like an orphan to the reaper). Linux only; elsewhere it does nothing.
func Subreap() error {
	if err := prctl(prSetChildSubreaper, 1); err != nil {
		return fmt.Errorf("become a child subreaper: %w", err)
	}
	if !subreaping.CompareAndSwap(false, true) {
		return nil
	}
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	go func() {
		for range sigchld {
			reapOrphans()
		}
	}()
	// No reap now: a process has no children of its own before it starts one, and a zombie
	// it inherited through exec is waited for at the first SIGCHLD.
	return nil
}

const prSetChildSubreaper = 36

func prctl(option, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, option, arg, 0); errno != 0 {
		return errno
	}
	return nil
}

// reapOrphans waits for every exited child that is no live run's process: exec.Cmd waits
// for its own child (by pid), so only the orphans the subreaper adopted are left to it.
// Holding live's lock keeps a process being started from looking unregistered.
func reapOrphans() {
	live.Lock()
	defer live.Unlock()
	for _, pid := range children() {
		if live.pids[pid] {
			continue
		}
		if p, ok := readStat(pid); ok && p.zombie {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// children lists this process's children, from /proc/self/task/*/children or, where the
// kernel lacks those files, from the whole process table.
func children() []int {
	self := os.Getpid()
	if pids, ok := taskChildren(self, nil); ok {
		return pids
	}
	var pids []int
	for _, p := range table() {
		if p.ppid == self {
			pids = append(pids, p.pid)
		}
	}
	return pids
}
