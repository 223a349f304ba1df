package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestInterruptContext runs helpers (this test binary) that set up interruptContext and send
// themselves a signal: SIGINT and SIGTERM cancel the context once the handler is installed,
// and after stop a signal has its default effect again (the helper dies by it).
func TestInterruptContext(t *testing.T) {
	if mode := os.Getenv("REIN_SIGNAL_HELPER"); mode != "" {
		signalHelper(mode)
		return
	}
	for _, c := range []struct {
		mode string
		want syscall.Signal // 0: exits 0 with the context cancelled
	}{
		{"SIGINT", 0}, {"SIGTERM", 0}, {"stopped", syscall.SIGINT}, {"stopped-at-once", syscall.SIGINT},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptContext$")
		cmd.Env = append(os.Environ(), "REIN_SIGNAL_HELPER="+c.mode)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case c.want == 0 && err != nil:
			t.Errorf("%s: %v\n%s", c.mode, err, out)
		case c.want != 0 && !errors.As(err, &ee):
			t.Errorf("%s: want death by %v, got %v\n%s", c.mode, c.want, err, out)
		case c.want != 0:
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != c.want {
				t.Errorf("%s: want death by %v, got %v\n%s", c.mode, c.want, err, out)
			}
		}
	}
}

func signalHelper(mode string) {
	ctx, stop, installed := interruptContext(context.Background())
	switch mode {
	case "SIGINT", "SIGTERM":
		<-installed
		sig := map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM}[mode]
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			os.Exit(3)
		}
		select {
		case <-ctx.Done():
			if got, want := context.Cause(ctx).Error(), sig.String()+" signal received"; got != want {
				os.Stderr.WriteString("cause " + got + ", want " + want + "\n")
				os.Exit(7)
			}
			stop()
			os.Exit(0)
		case <-time.After(20 * time.Second):
			os.Exit(4) // the signal did not cancel the context
		}
	case "stopped":
		<-installed
		stop()
	case "stopped-at-once": // stop may come before the goroutine installed anything
		stop()
		time.Sleep(50 * time.Millisecond)
	}
	if ctx.Err() == nil {
		os.Exit(5) // stop must cancel the context
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
	time.Sleep(5 * time.Second)
	os.Exit(6) // still alive: the signal was still caught
}
