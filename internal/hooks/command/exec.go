package command

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/proc"
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

// execute runs command with sh -c in dir, stdin as its input, through the process runner
// (its own process group, killed when timeout passes or ctx ends). Exit statuses 0 and 2 are
// results; anything else is a *RunError.
func execute(ctx context.Context, command, dir string, env []string, stdin []byte, timeout time.Duration) (result, error) {
	stdout, stderr := &capped{max: maxOutputBytes}, &capped{max: maxOutputBytes}
	pr := proc.Run(ctx, proc.Spec{
		Path: "sh", Args: []string{"sh", "-c", command}, Dir: dir, Env: env,
		Stdin: bytes.NewReader(stdin), Stdout: stdout, Stderr: stderr,
		Timeout: timeout, WaitDelay: waitDelay,
	})
	res := result{code: pr.Code, stdout: stdout.buf.Bytes(), stderr: stderr.buf.Bytes()}
	switch {
	case ctx.Err() != nil:
		return res, &RunError{Kind: "cancelled", Msg: "cancelled: " + ctx.Err().Error()}
	case pr.Outcome == proc.TimedOut:
		return res, &RunError{Kind: "timeout", Msg: fmt.Sprintf("timed out after %s (its process group was killed)", timeout)}
	case pr.Outcome == proc.Signaled:
		return res, &RunError{Kind: "signal", Msg: fmt.Sprintf("killed: signal: %v%s", pr.Signal, stderrTail(res.stderr))}
	case pr.Outcome != proc.Exited:
		return res, &RunError{Kind: "start", Msg: fmt.Sprintf("could not run: %v", pr.Err)}
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
