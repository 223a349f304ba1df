package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// waitDelay bounds the wait for a command's output pipes once its shell exited (a background
// child may hold them open).
const waitDelay = time.Second

// result is what a finished command left.
type result struct {
	code           int
	stdout, stderr []byte
}

// RunError is a command that failed: it could not start, was killed by a signal or its
// timeout, exited with a status other than 0 and 2, or printed an answer that is not valid.
// Its message may quote the command's stderr (for the user); HookDetail does not.
type RunError struct {
	// Kind is "start", "timeout", "signal", "exit", "cancelled" or "output".
	Kind string
	Code int
	Msg  string
}

func (e *RunError) Error() string { return e.Msg }

// HookDetail names the failure without anything the command printed (for session records).
func (e *RunError) HookDetail() string {
	switch e.Kind {
	case "exit":
		return fmt.Sprintf("exit status %d", e.Code)
	case "output":
		return "invalid output"
	case "start":
		return "could not start"
	}
	return e.Kind
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += len(p) - max(room, 0)
	return len(p), nil
}

// execute runs command with sh -c in dir, stdin as its input, in its own process group; the
// group is killed when timeout passes or ctx ends. Exit statuses 0 and 2 are results; anything
// else is a *RunError.
func execute(ctx context.Context, command, dir string, env []string, stdin []byte, timeout time.Duration) (result, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "sh", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = bytes.NewReader(stdin)
	stdout, stderr := &capped{max: maxOutputBytes}, &capped{max: maxOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The shell leads its group, so -pid names the group: children die with it.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	res := result{stdout: stdout.buf.Bytes(), stderr: stderr.buf.Bytes()}
	switch {
	case ctx.Err() != nil:
		return res, &RunError{Kind: "cancelled", Msg: "cancelled: " + ctx.Err().Error()}
	case tctx.Err() != nil:
		return res, &RunError{Kind: "timeout", Msg: fmt.Sprintf("timed out after %s (its process group was killed)", timeout)}
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil || errors.Is(err, exec.ErrWaitDelay):
		res.code = 0
		if cmd.ProcessState != nil {
			res.code = cmd.ProcessState.ExitCode()
		}
	case errors.As(err, &exitErr):
		res.code = exitErr.ExitCode()
		if res.code < 0 {
			return res, &RunError{Kind: "signal", Msg: fmt.Sprintf("killed: %v%s", err, stderrTail(res.stderr))}
		}
	default:
		return res, &RunError{Kind: "start", Msg: fmt.Sprintf("could not run: %v", err)}
	}
	if res.code != 0 && res.code != 2 {
		return res, &RunError{Kind: "exit", Code: res.code, Msg: fmt.Sprintf("exit status %d%s", res.code, stderrTail(res.stderr))}
	}
	return res, nil
}

// stderrTail quotes the end of a command's stderr for an error message.
func stderrTail(stderr []byte) string {
	s := strings.TrimSpace(string(stderr))
	if s == "" {
		return ""
	}
	const limit = 2000
	if len(s) > limit {
		s = "…" + s[len(s)-limit:]
	}
	return ": " + strings.ToValidUTF8(s, "\uFFFD")
}
