package gitx

import (
	"context"
	"errors"
	"os/exec"
	"strings"

	"github.com/reinhq/rein/internal/proc"
)

var (
	// ErrNotRepo reports that the directory is not in a git repository.
	ErrNotRepo = errors.New("not a git repository")
	// ErrNoGit reports that no git executable is on PATH.
	ErrNoGit = errors.New("git is not installed: no git on PATH")
)

// StderrCap is how many bytes of git's stderr an [*Error] keeps.
const StderrCap = 4 << 10

// Error is a git invocation that failed: it did not start, exited non-zero, or was killed.
type Error struct {
	Args     []string // the caller's arguments, without the hardening options
	ExitCode int      // git's exit status; -1 when it did not start or was killed
	Stderr   string   // the first StderrCap bytes of stderr, trimmed
	// Err is the cause: the error starting git, or how it ended ("exit status 128", "canceled").
	Err error
	// cond is the condition the failure means (ErrNotRepo, ErrNoGit, a context error) or nil.
	cond error
}

func newError(ctx context.Context, args []string, res proc.Result, stderr string) *Error {
	e := &Error{Args: args, ExitCode: -1, Stderr: strings.TrimSpace(stderr), Err: res.Err}
	if e.Err == nil {
		e.Err = errors.New(res.String())
	}
	switch {
	case ctx.Err() != nil:
		e.cond = ctx.Err()
	case errors.Is(res.Err, exec.ErrNotFound):
		e.cond = ErrNoGit
	case res.Outcome == proc.Exited:
		e.ExitCode = res.Code
		// LC_ALL=C keeps this message in English.
		if strings.Contains(e.Stderr, "not a git repository") {
			e.cond = ErrNotRepo
		}
	}
	return e
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("git")
	for _, a := range e.Args {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	b.WriteString(": ")
	if e.cond != nil {
		b.WriteString(e.cond.Error())
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

// Unwrap returns the condition (when there is one) and the cause.
func (e *Error) Unwrap() []error {
	if e.cond == nil {
		return []error{e.Err}
	}
	return []error{e.cond, e.Err}
}

// exitedWith reports whether err is a git that ran and exited with code.
func exitedWith(err error, code int) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.cond == nil && ge.ExitCode == code
}
