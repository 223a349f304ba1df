package command

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/proc"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/sandbox"
)

// The codes of the refusals of approved commands (*[refusal.Error]). Codes are stable
// strings, never renamed once released.
const (
	// CodeUnknownCommand: no approved command has the requested id.
	CodeUnknownCommand refusal.Code = "policy.unknown_command"
	// CodeInvalidCommand: an approved command declaration is unusable.
	CodeInvalidCommand refusal.Code = "policy.invalid_command"
	// CodeCommandFailed: an approved command could not be started.
	CodeCommandFailed refusal.Code = "policy.command_failed"
)

// FixedPath is the PATH every approved command runs with. It holds only system directories:
// never ".", the workspace or a user's bin directory.
const FixedPath = "/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// FixedEnv is set for every approved command, after the allowlisted variables: Go uses
// only its defaults and the local toolchain, git ignores system configuration and never
// prompts.
var FixedEnv = []string{
	"GOENV=off",
	"GOTOOLCHAIN=local",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_TERMINAL_PROMPT=0",
}

// Defaults for approved commands.
const (
	DefaultCommandTimeout = 10 * time.Minute
	DefaultMaxOutput      = 256 << 10
	// commandWaitDelay bounds the wait for the output pipes once the process is gone.
	commandWaitDelay = 2 * time.Second
)

// Command is an approved command: a fixed argv run without a shell.
type Command struct {
	// ID names the command (the writer asks for it by id).
	ID string
	// Argv is the program and its arguments. A program without "/" is looked up in
	// [FixedPath]; a path must be absolute.
	Argv []string
	// Dir is the absolute working directory.
	Dir string
	// Env lists the names of variables passed through from rein's environment. Names in
	// [UnsafeEnv] are refused.
	Env []string
	// Timeout bounds the run; zero means [DefaultCommandTimeout]. When it expires the
	// whole process group is killed.
	Timeout time.Duration
	// MaxOutput bounds the output kept (the tail); zero means [DefaultMaxOutput].
	MaxOutput int
	// Sandbox, when set, runs the command inside it (bubblewrap: no network, only the
	// sandbox's workspace writable; see internal/sandbox). Dir must then lie inside the
	// sandbox's workspace, and the program must be visible in the sandbox (the system
	// directories hold every [FixedPath] directory). Nil runs the command directly.
	Sandbox *sandbox.Sandbox
}

// Validate checks a declaration. Errors are *[refusal.Error] with [CodeInvalidCommand].
func (c Command) Validate() error {
	bad := func(format string, args ...any) error {
		return refusal.Errorf(CodeInvalidCommand, "approved command %q: %s", c.ID, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(c.ID) == "" {
		return refusal.Errorf(CodeInvalidCommand, "an approved command needs an id")
	}
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return bad("argv is empty; give the program and its arguments")
	}
	if strings.Contains(c.Argv[0], "/") && !filepath.IsAbs(c.Argv[0]) {
		return bad("program %q is a relative path; give an absolute path or a name found in %s", c.Argv[0], FixedPath)
	}
	for _, a := range c.Argv {
		if strings.ContainsRune(a, 0) {
			return bad("an argument contains a NUL byte")
		}
	}
	if !filepath.IsAbs(c.Dir) {
		return bad("working directory %q is not absolute", c.Dir)
	}
	for _, n := range c.Env {
		if !ValidEnvName(n) {
			return bad("%q is not an environment variable name", n)
		}
		if matchEnv(n, UnsafeEnv) {
			return bad("%s may not be passed to an approved command: it changes what programs run or load (see command.UnsafeEnv)", n)
		}
	}
	if c.Sandbox != nil {
		ws := c.Sandbox.Workspace()
		dir := filepath.Clean(c.Dir)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if dir != ws && !strings.HasPrefix(dir, ws+string(filepath.Separator)) {
			return bad("working directory %s is outside the sandbox's workspace %s", c.Dir, ws)
		}
	}
	if c.Timeout < 0 || c.MaxOutput < 0 {
		return bad("timeout and output limit must not be negative")
	}
	return nil
}

// Registry holds approved commands by id. It is immutable and safe for concurrent use.
type Registry struct {
	byID map[string]Command
}

// NewRegistry validates the commands and indexes them by id; ids must be unique.
func NewRegistry(cmds ...Command) (*Registry, error) {
	r := &Registry{byID: make(map[string]Command, len(cmds))}
	for _, c := range cmds {
		if err := c.Validate(); err != nil {
			return nil, err
		}
		if _, dup := r.byID[c.ID]; dup {
			return nil, refusal.Errorf(CodeInvalidCommand, "approved command id %q is declared twice", c.ID)
		}
		c.Argv = slices.Clone(c.Argv)
		c.Env = slices.Clone(c.Env)
		r.byID[c.ID] = c
	}
	return r, nil
}

// IDs returns the command ids, sorted.
func (r *Registry) IDs() []string {
	ids := make([]string, 0, len(r.byID))
	for id := range r.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Get returns the command with the given id; an unknown id is an *[refusal.Error] with
// [CodeUnknownCommand] listing the known ones.
func (r *Registry) Get(id string) (Command, error) {
	c, ok := r.byID[id]
	if !ok {
		known := strings.Join(r.IDs(), ", ")
		if known == "" {
			known = "none are declared"
		}
		return Command{}, refusal.Errorf(CodeUnknownCommand, "no approved command has the id %q; use one of: %s", id, known)
	}
	c.Argv = slices.Clone(c.Argv)
	c.Env = slices.Clone(c.Env)
	return c, nil
}

// Run runs the command with the given id (see [Run]).
func (r *Registry) Run(ctx context.Context, id string) (Result, error) {
	c, err := r.Get(id)
	if err != nil {
		return Result{}, err
	}
	return Run(ctx, c)
}

// Result is the outcome of an approved command.
type Result struct {
	ID string
	// ExitCode is the exit status; -1 when the process was killed or did not exit normally.
	ExitCode int
	// Output is stdout and stderr merged in arrival order: the last MaxOutput bytes,
	// preceded by a notice when earlier output was dropped.
	Output string
	// TotalBytes counts all output, kept or not.
	TotalBytes int64
	Truncated  bool
	TimedOut   bool
	// Canceled: the context was cancelled before the command finished.
	Canceled bool
	Duration time.Duration
}

// Run runs an approved command: no shell, the environment built from the allowlist plus
// [FixedEnv] and PATH=[FixedPath], stdin on /dev/null, its own process group, output kept up
// to the limit, inside [Command.Sandbox] when one is set (a sandbox that cannot start is an
// error: the command never runs unsandboxed instead). When the timeout expires or ctx is
// cancelled the whole group is killed (in a sandbox, every process in it).
// A non-zero exit is a result, not an error; an error (an *[refusal.Error]) means the command could
// not run.
func Run(ctx context.Context, c Command) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	prog := c.Argv[0]
	if !strings.Contains(prog, "/") {
		p, err := lookPath(prog)
		if err != nil {
			return Result{}, &refusal.Error{Code: CodeCommandFailed, Message: fmt.Sprintf("approved command %q: %s is not in %s; give its absolute path", c.ID, prog, FixedPath), Err: err}
		}
		prog = p
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultCommandTimeout
	}
	limit := c.MaxOutput
	if limit == 0 {
		limit = DefaultMaxOutput
	}
	out := proc.NewTail(limit)
	spec := proc.Spec{
		Path: prog, Args: c.Argv, Dir: c.Dir, Env: commandEnv(c.Env),
		Stdout: out, Stderr: out, // one writer: one pipe, arrival order kept
		Timeout: timeout, WaitDelay: commandWaitDelay,
		// Whatever happened, nothing the command started may outlive the run: its group,
		// and (outside the sandbox, which ends everything in it) what left the group.
		KillGroupOnExit: true,
		Contain:         c.Sandbox == nil,
	}
	if c.Sandbox != nil {
		prep, err := c.Sandbox.Prepare(append([]string{prog}, c.Argv[1:]...), c.Dir)
		if err != nil {
			return Result{}, &refusal.Error{Code: CodeCommandFailed, Message: fmt.Sprintf("approved command %q was not run: %v", c.ID, err), Err: err}
		}
		defer prep.Release() // after proc.Run: the sandbox is gone with bwrap
		spec.Path, spec.Args, spec.Env = prep.Args[0], prep.Args, c.Sandbox.Env(spec.Env)
	}

	pr := proc.Run(ctx, spec)
	res := Result{ID: c.ID, ExitCode: -1, Duration: pr.Duration}
	res.Output, res.TotalBytes, res.Truncated = tailText(out)
	switch pr.Outcome {
	case proc.StartFailed:
		return Result{}, &refusal.Error{Code: CodeCommandFailed, Message: fmt.Sprintf("approved command %q could not start: %v", c.ID, pr.Err), Err: pr.Err}
	case proc.WaitFailed:
		return res, &refusal.Error{Code: CodeCommandFailed, Message: fmt.Sprintf("approved command %q: %v", c.ID, pr.Err), Err: pr.Err}
	case proc.Canceled:
		res.Canceled = true
	case proc.TimedOut:
		res.TimedOut = true
	case proc.Exited:
		res.ExitCode = pr.Code
	}
	return res, nil
}

// lookPath finds a program in FixedPath.
func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(FixedPath) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// commandEnv builds an approved command's environment.
func commandEnv(allow []string) []string {
	env := []string{"PATH=" + FixedPath}
	for _, n := range allow {
		if matchEnv(n, UnsafeEnv) {
			continue
		}
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return append(env, FixedEnv...)
}

// tailText renders the output kept: the tail, preceded by a notice when earlier output was
// dropped, never starting in the middle of a UTF-8 sequence.
func tailText(out *proc.Tail) (text string, total int64, truncated bool) {
	kept, total := out.Bytes(), out.Total()
	for len(kept) > 0 && int64(len(kept)) < total && kept[0]&0xC0 == 0x80 {
		kept = kept[1:]
	}
	if int64(len(kept)) == total {
		return string(kept), total, false
	}
	notice := fmt.Sprintf("[output truncated: showing the last %d of %d bytes]\n", len(kept), total)
	return notice + string(kept), total, true
}
