package gitx

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/reinhq/rein/internal/proc"
)

// hardening comes before the caller's arguments on every invocation (see the package doc).
var hardening = []string{
	"--no-pager",
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "diff.external=",
	"-c", "core.pager=cat",
	"-c", "protocol.ext.allow=never",
	"-c", "core.quotePath=false",
	"-c", "color.ui=false",
	"-c", "credential.helper=",
	"-c", "core.askPass=",
}

// keptEnv names the variables of rein's environment that git gets; nothing else is inherited.
var keptEnv = []string{"HOME", "PATH", "XDG_CONFIG_HOME", "TMPDIR", "USER", "LOGNAME", "EMAIL"}

// fixedEnv is set on every invocation.
var fixedEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_OPTIONAL_LOCKS=0",
	"GIT_PAGER=cat",
	"PAGER=cat",
	"GIT_EDITOR=:",
	"GIT_SEQUENCE_EDITOR=:",
	"LC_ALL=C",
}

// waitDelay bounds how long a finished (or killed) git may hold its output pipes open.
const waitDelay = 2 * time.Second

// Runner runs git in Dir (the current directory when empty). The zero value is ready to use.
type Runner struct {
	Dir string
}

// Run runs git with args and returns its stdout. A failure is an [*Error].
func (r Runner) Run(ctx context.Context, args ...string) ([]byte, error) {
	var extra []string
	if mayRunDrivers(args) {
		var err error
		if extra, err = r.driverOverrides(ctx); err != nil {
			return nil, err
		}
	}
	return r.exec(ctx, extra, args)
}

// exec is the one place that builds and starts a git process: hardening, then extra (driver
// overrides), then args.
func (r Runner) exec(ctx context.Context, extra, args []string) ([]byte, error) {
	argv := slices.Concat([]string{"git"}, hardening, extra, withDiffOptions(args))
	var stdout bytes.Buffer
	stderr := &capped{max: StderrCap}
	res := proc.Run(ctx, proc.Spec{Path: "git", Args: argv, Dir: r.Dir, Env: environment(),
		Stdout: &stdout, Stderr: stderr, WaitDelay: waitDelay, KillGroupOnExit: true})
	if res.Outcome == proc.Exited && res.Code == 0 {
		return stdout.Bytes(), nil
	}
	return stdout.Bytes(), newError(ctx, args, res, stderr.String())
}

// environment is git's environment, built from scratch (see the package doc).
func environment() []string {
	env := make([]string, 0, len(keptEnv)+len(fixedEnv))
	for _, k := range keptEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, fixedEnv...)
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	max     int
	buf     bytes.Buffer
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room >= len(p) {
		c.buf.Write(p)
	} else {
		c.buf.Write(p[:max(room, 0)])
		c.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

func (c *capped) String() string {
	if c.dropped == 0 {
		return c.buf.String()
	}
	return c.buf.String() + "…(" + strconv.Itoa(c.dropped) + " more bytes)"
}
