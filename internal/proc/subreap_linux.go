package proc

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Subreap makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a process
// that any of its descendants leaves behind when it exits is reparented to this process
// instead of init, so a sweep still finds it below rein. The reaper that waits for those
// adopted orphans once they exit (a SIGCHLD watcher and its goroutine) is started with the
// first process [Run] or [Start] starts, before it is started: a process has no children of
// its own before it starts one, so a rein that starts none pays for no watcher. The setting
// is process-wide: call it once, from main, in a process whose every child is started by
// [Run] (a child started otherwise would look like an orphan to the reaper). Linux only;
// elsewhere it does nothing.
func Subreap() error {
	if err := prctl(prSetChildSubreaper, 1); err != nil {
		return fmt.Errorf("become a child subreaper: %w", err)
	}
	subreaping.Store(true)
	return nil
}

// watchOrphans starts the reaper once, if [Subreap] made this process a subreaper; the first
// start of a process calls it (under live's lock) before the process exists. No reap now: a
// zombie inherited through exec is waited for at the first SIGCHLD.
func watchOrphans() {
	if !subreaping.Load() || watching {
		return
	}
	watching = true
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	go func() {
		for range sigchld {
			reapOrphans()
		}
	}()
}

// watching is set once watchOrphans started the reaper; it is read and set under live's lock.
var watching bool

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
