package run

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/command"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/secret"
	"github.com/reinhq/rein/internal/tool"
)

// CommandEnv names the variables an approved verification command gets from rein's
// environment besides internal/command's fixed ones: what a build tool needs to find its
// caches, and the locale. None of them changes what runs. In the OS sandbox GOCACHE and
// TMPDIR are left out: the host's are not visible there, and the go command then keeps its
// build cache in the sandbox's private /tmp, so no command leaves cached results another
// one (a later verification) would trust.
var CommandEnv = []string{"HOME", "TMPDIR", "GOCACHE", "GOMODCACHE", "GOPATH", "LANG"}

// sandboxedEnv is CommandEnv in the OS sandbox.
func sandboxedEnv() []string {
	return slices.DeleteFunc(slices.Clone(CommandEnv), func(n string) bool { return n == "GOCACHE" || n == "TMPDIR" })
}

// maxOutputShown bounds a command's output in a tool result or an artifact (its tail).
const maxOutputShown = 4 << 10

// commandRun is one run of an approved command with its output (redacted, its tail).
type commandRun struct {
	CommandResult
	Output string `json:"output"`
}

// commandSandbox is the OS sandbox of the approved commands that run in dir: nil when env asks
// for none; an error (the commands must not run) when it cannot be built.
func commandSandbox(env Env, dir string) (*sandbox.Sandbox, error) {
	if env.Sandbox == nil {
		return nil, nil
	}
	sb, err := env.Sandbox(dir)
	if err != nil {
		return nil, fmt.Errorf("the OS sandbox was asked for (--sandbox or the settings' \"sandbox\") and could not be built for %s, so no approved command runs there: %w", dir, err)
	}
	return sb, nil
}

// approvedCommand is locked verification command v with id, run in dir (a relative program
// path is the directory's file) inside sb when sb is set.
func approvedCommand(id string, v Verification, dir string, sb *sandbox.Sandbox) command.Command {
	argv := slices.Clone(v.Argv)
	if len(argv) > 0 && strings.ContainsRune(argv[0], '/') && !filepath.IsAbs(argv[0]) {
		argv[0] = filepath.Join(dir, filepath.FromSlash(argv[0]))
	}
	c := command.Command{ID: id, Argv: argv, Dir: dir, Env: CommandEnv}
	if sb != nil {
		c.Env, c.Sandbox = sandboxedEnv(), sb
	}
	return c
}

// commands returns the locked verification commands as approved commands that run in dir,
// in env's OS sandbox when it asks for one.
func (r *Run) commands(env Env, dir string) (*command.Registry, bool, error) {
	sb, err := commandSandbox(env, dir)
	if err != nil {
		return nil, false, err
	}
	var cmds []command.Command
	for _, id := range slices.Sorted(maps.Keys(r.Lock.Verification)) {
		cmds = append(cmds, approvedCommand(id, r.Lock.Verification[id], dir, sb))
	}
	reg, err := command.NewRegistry(cmds...)
	return reg, sb != nil, err
}

// runVerification runs the required verification commands and the extra ones named, in
// order, in dir through the one process runner, and reports whether every one passed.
func (r *Run) runVerification(ctx context.Context, env Env, dir string, extra []string) ([]commandRun, bool, error) {
	reg, sandboxed, err := r.commands(env, dir)
	if err != nil {
		return nil, false, err
	}
	var ids []string
	for _, id := range reg.IDs() {
		if r.Lock.Verification[id].Required || slices.Contains(extra, id) {
			ids = append(ids, id)
		}
	}
	passed := true
	var runs []commandRun
	for _, id := range ids {
		res, err := reg.Run(ctx, id)
		if err != nil {
			return runs, false, fmt.Errorf("verification command %s: %w", id, err)
		}
		cr := commandRun{CommandResult: CommandResult{ID: id, Argv: r.Lock.Verification[id].Argv, Required: r.Lock.Verification[id].Required,
			ExitCode: res.ExitCode, TimedOut: res.TimedOut, DurationMs: res.Duration.Milliseconds(), Passed: res.ExitCode == 0 && !res.TimedOut && !res.Canceled,
			Sandboxed: sandboxed},
			Output: tail(secret.Redact(res.Output), maxOutputShown)}
		passed = passed && cr.Passed
		runs = append(runs, cr)
	}
	return runs, passed, nil
}

func results(runs []commandRun) []CommandResult {
	out := make([]CommandResult, len(runs))
	for i, c := range runs {
		out[i] = c.CommandResult
	}
	return out
}

// tail keeps the last n bytes of s, at a UTF-8 boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && s[0]&0xC0 == 0x80 {
		s = s[1:]
	}
	return "[…]" + s
}

// runCommandTool is the writer's run_command tool: it runs an approved verification command
// by id in the worktree — a fixed argv, the scrubbed environment, no shell. Any other id is
// refused with BlockWriterUnapprovedBash (a typed refusal), which the model sees and the
// attempt counts.
type runCommandTool struct {
	run *Run
	env Env
	dir string
}

func (t *runCommandTool) Spec() tool.Spec {
	ids := slices.Sorted(maps.Keys(t.run.Lock.Verification))
	return tool.Spec{
		Name: policy.ToolRunCommand,
		Description: "Run an approved verification command in your worktree by its id (" + strings.Join(ids, ", ") + "). " +
			"The program, its arguments and environment are fixed by the project profile; there is no shell and no other command.",
		Brief:   "Run an approved verification command by id: " + strings.Join(ids, ", ") + ".",
		Snippet: policy.ToolRunCommand + ": run an approved verification command by id",
		Schema:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the approved command's id"}},"required":["id"],"additionalProperties":false}`),
		Replay:  tool.ReplayNever, Sequential: true,
	}
}

func (t *runCommandTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var args struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tool.Result{}, err
	}
	if _, ok := t.run.Lock.Verification[args.ID]; !ok {
		return tool.Result{}, refusal.Errorf(BlockWriterUnapprovedBash, "%q is not an approved verification command; only these run, by id, with their fixed arguments: %s",
			args.ID, strings.Join(slices.Sorted(maps.Keys(t.run.Lock.Verification)), ", "))
	}
	reg, _, err := t.run.commands(t.env, t.dir)
	if err != nil {
		return tool.Result{}, err
	}
	res, err := reg.Run(ctx, args.ID)
	if err != nil {
		return tool.Result{}, err
	}
	out := tail(secret.Redact(res.Output), maxOutputShown)
	r := tool.TextResult(fmt.Sprintf("%s exited %d%s\n%s", args.ID, res.ExitCode, map[bool]string{true: " (timed out)"}[res.TimedOut], out))
	r.IsError = res.ExitCode != 0 || res.TimedOut
	return r, nil
}
