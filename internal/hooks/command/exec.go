package command

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
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

// capped keeps the first max bytes written and counts the rest. When firstLine is set it is
// called once with the first line of output as soon as it is complete (the async marker).
type capped struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	dropped   int
	firstLine func(line []byte)
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += len(p) - max(room, 0)
	if c.firstLine != nil {
		if i := bytes.IndexByte(c.buf.Bytes(), '\n'); i >= 0 {
			f := c.firstLine
			c.firstLine = nil
			f(append([]byte(nil), c.buf.Bytes()[:i]...))
		}
	}
	return len(p), nil
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf.Bytes()...)
}

// spec says how to run one hook command.
type spec struct {
	command string
	// args, when set, runs command as the program with these arguments, without a shell.
	args    []string
	dir     string
	env     []string
	stdin   []byte
	timeout time.Duration
}

// running is a command started in the background (an async hook, or one that announced
// itself async on its first line); done is closed once res and err are set.
type running struct {
	done chan struct{}
	res  result
	err  error
}

// start runs sp through the process runner (its own process group, killed when the
// timeout passes or ctx ends). With background it returns at once, the command running;
// detach, when it returns true for the first line of stdout, makes start return then;
// otherwise start returns once the command ended. Exit statuses 0 and 2 are results;
// anything else is a *RunError.
func start(ctx context.Context, sp spec, detach func(firstLine []byte) bool, background bool) (r *running, detached bool) {
	stdout, stderr := &capped{max: maxOutputBytes}, &capped{max: maxOutputBytes}
	early := make(chan struct{})
	if detach != nil {
		stdout.firstLine = func(line []byte) {
			if detach(line) {
				close(early)
			}
		}
	}
	path, argv := "sh", []string{"sh", "-c", sp.command}
	if len(sp.args) > 0 {
		path, argv = sp.command, append([]string{sp.command}, sp.args...)
	}
	r = &running{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		pr := proc.Run(ctx, proc.Spec{
			Path: path, Args: argv, Dir: sp.dir, Env: sp.env,
			Stdin: bytes.NewReader(sp.stdin), Stdout: stdout, Stderr: stderr,
			Timeout: sp.timeout, WaitDelay: waitDelay,
		})
		r.res = result{code: pr.Code, stdout: stdout.bytes(), stderr: stderr.bytes()}
		r.err = outcome(ctx, pr, r.res, sp.timeout)
	}()
	if background {
		return r, true
	}
	select {
	case <-r.done:
		return r, false
	case <-early:
		return r, true
	}
}

// outcome turns how a command ended into nil (exit status 0 or 2) or a *RunError.
func outcome(ctx context.Context, pr proc.Result, res result, timeout time.Duration) error {
	switch {
	case ctx.Err() != nil:
		return &RunError{Kind: "cancelled", Msg: "cancelled: " + ctx.Err().Error()}
	case pr.Outcome == proc.TimedOut:
		return &RunError{Kind: "timeout", Msg: fmt.Sprintf("timed out after %s (its process group was killed)", timeout)}
	case pr.Outcome == proc.Signaled:
		return &RunError{Kind: "signal", Msg: fmt.Sprintf("killed: signal: %v%s", pr.Signal, stderrTail(res.stderr))}
	case pr.Outcome != proc.Exited:
		return &RunError{Kind: "start", Msg: fmt.Sprintf("could not run: %v", pr.Err)}
	}
	if res.code != 0 && res.code != 2 {
		return &RunError{Kind: "exit", Code: res.code, Msg: fmt.Sprintf("exit status %d%s", res.code, stderrTail(res.stderr))}
	}
	return nil
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
