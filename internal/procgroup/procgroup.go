// Package procgroup runs a command as the leader of its own process group, so that
// cancelling it (timeout, abort) kills everything it started — children, grandchildren and
// background jobs — not just the first process.
package procgroup

import (
	"errors"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// Own puts cmd (not yet started, built with exec.CommandContext) in a new process group whose
// whole membership gets SIGKILL when cmd's context is done, and waits at most waitDelay for
// its output pipes after it exits. The returned function reports whether the group was killed
// by cancellation.
func Own(cmd *exec.Cmd, waitDelay time.Duration) (killed func() bool) {
	var k atomic.Bool
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		k.Store(true)
		// The command leads its group (Setpgid with Pgid 0), so -pid names the group.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
	cmd.WaitDelay = waitDelay
	return k.Load
}
