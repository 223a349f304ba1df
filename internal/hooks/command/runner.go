package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// Runner runs the command hooks of a Config for one agent (one session).
type Runner struct {
	Config Config
	// Dir is the project directory: commands run there, and CLAUDE_PROJECT_DIR and
	// REIN_PROJECT_DIR name it.
	Dir string
	// Cwd is the input's cwd and the base of relative tool paths; "" means Dir.
	Cwd string
	// SessionID and TranscriptPath (the session ledger's path) go into every input; both ""
	// for a run without a session.
	SessionID      string
	TranscriptPath string
	// Source is SessionStart's source: SourceStartup or SourceResume.
	Source string
	// Model is SessionStart's model.
	Model string
	// Env is the commands' environment before the project variables; nil means os.Environ().
	Env []string
	// EnvFile, when set, is CLAUDE_ENV_FILE in SessionStart hooks: the file whose
	// `export NAME=VALUE` lines the caller applies to later bash commands (see ParseEnvFile).
	EnvFile string
	// Confirm asks the user a yes/no question (a PreToolUse "ask"); nil in a non-interactive
	// run, where an "ask" refuses the call with an error matching kernel.ErrNeedsApproval.
	Confirm func(question string) (bool, error)
	// Notice shows the user a hook's message (systemMessage, a SessionStart's exit status 2
	// stderr, a stopReason); nil drops them.
	Notice func(string)
	// PermissionMode is the input's permission_mode ("" means "default").
	PermissionMode string
	// Sync, when set, brings the transcript at TranscriptPath up to date; it is called before
	// every command runs, with the message the event is about when it may not be recorded
	// yet (Stop's final answer), and a failure is a notice (the hook still runs).
	Sync func(pending *llm.Message) error

	async asyncQueue
	// mu guards stopBlocks: the Stop blocks in a row.
	mu         sync.Mutex
	stopBlocks int
}

// SessionStart sources.
const (
	SourceStartup = "startup"
	SourceResume  = "resume"
)

// Register adds one registry hook per configured command, in the order of the settings
// (global first), with its matcher and fail mode.
func (r *Runner) Register(reg *hooks.Registry) error {
	for _, event := range Events {
		for gi, g := range r.Config[event] {
			re, err := compile(g.Matcher)
			if err != nil {
				return fmt.Errorf("hooks.%s[%d].matcher: %w", event, gi, err)
			}
			for _, h := range g.Hooks {
				if h.skip {
					continue
				}
				name := h.name
				if name == "" {
					name = event
				}
				var cond *ifRule
				if h.If != "" {
					c, err := parseIf(h.If)
					if err != nil {
						return fmt.Errorf("hooks.%s[%d].if: %w", event, gi, err)
					}
					cond = &c
				}
				opts := []hooks.Option{hooks.Match(r.matcher(event, re, cond))}
				if h.FailClosed {
					opts = append(opts, hooks.FailClosed())
				}
				r.register(reg, event, name, h, opts)
			}
		}
	}
	r.registerAsync(reg)
	return nil
}

// matcher returns the registry predicate of a hook: its group's matcher on the event's
// subject, and the hook's "if" rule (tool events only; with one, other events never run it).
func (r *Runner) matcher(event string, re *regexp.Regexp, cond *ifRule) func(hooks.Event) bool {
	match := func(s ...string) bool {
		if re == nil {
			return true
		}
		return slices.ContainsFunc(s, re.MatchString)
	}
	tool := func(name string, raw json.RawMessage) bool {
		cc := hookToolName(name, raw)
		if !match(cc, name) {
			return false
		}
		if cond == nil {
			return true
		}
		in, err := toClaude(name, raw, r.cwd())
		return err == nil && cond.matches(cc, in, r.cwd())
	}
	return func(ev hooks.Event) bool {
		if e, ok := ev.(*hooks.BeforeTool); ok {
			return tool(e.Spec.Name, e.Args)
		}
		if e, ok := ev.(*hooks.AfterTool); ok {
			// Claude Code's PostToolUse follows a tool that succeeded, PostToolUseFailure one
			// that failed.
			return e.Result.IsError == (event == PostToolUseFailure) && tool(e.Call.Name, e.Args)
		}
		if cond != nil {
			return false
		}
		switch e := ev.(type) {
		case *hooks.BeforeAgentStart:
			return e.Prompt != nil
		case *hooks.BeforeCompact:
			return match(trigger(e))
		case *hooks.SessionStart:
			return match(r.source())
		case *hooks.SessionEnd:
			return match(endReason(e.Reason))
		}
		return true
	}
}

func (r *Runner) register(reg *hooks.Registry, event, name string, h Hook, opts []hooks.Option) {
	switch event {
	case PreToolUse:
		hooks.On(reg, name, func(ctx context.Context, ev *hooks.BeforeTool) error { return r.preToolUse(ctx, h, ev) }, opts...)
	case PostToolUse, PostToolUseFailure:
		hooks.On(reg, name, func(ctx context.Context, ev *hooks.AfterTool) error { return r.postToolUse(ctx, h, event, ev) }, opts...)
	case UserPromptSubmit:
		hooks.On(reg, name, func(ctx context.Context, ev *hooks.BeforeAgentStart) error { return r.userPromptSubmit(ctx, h, ev) }, opts...)
	case SessionStart:
		hooks.On(reg, name, func(ctx context.Context, ev *hooks.SessionStart) error { return r.sessionStart(ctx, h, ev) }, opts...)
	case SessionEnd:
		hooks.On(reg, name, func(ctx context.Context, ev *hooks.SessionEnd) error { return r.sessionEnd(ctx, h, ev) }, opts...)
	case Stop:
		hooks.On(reg, name, func(ctx context.Context, ev *hooks.Stop) error { return r.stop(ctx, h, ev) }, opts...)
	case PreCompact:
		hooks.On(reg, name, func(ctx context.Context, ev *hooks.BeforeCompact) error { return r.preCompact(ctx, h, ev) }, opts...)
	}
}

func (r *Runner) cwd() string {
	if r.Cwd != "" {
		return r.Cwd
	}
	return r.Dir
}

func (r *Runner) source() string {
	if r.Source == "" {
		return SourceStartup
	}
	return r.Source
}

func trigger(e *hooks.BeforeCompact) string {
	if e.Manual {
		return "manual"
	}
	return "auto"
}

// endReason maps a kernel session_end reason to Claude Code's: a process done with its
// session is "other".
func endReason(reason string) string {
	if reason == hooks.EndExit || reason == "" {
		return "other"
	}
	return reason
}

// env is a command's environment: rein's, CLAUDE_PROJECT_DIR and REIN_PROJECT_DIR, for
// a plugin's hook CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA, and for a SessionStart hook CLAUDE_ENV_FILE.
func (r *Runner) env(h Hook, event string) []string {
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), "CLAUDE_PROJECT_DIR="+r.Dir, "REIN_PROJECT_DIR="+r.Dir)
	if h.pluginRoot != "" {
		env = append(env, "CLAUDE_PLUGIN_ROOT="+h.pluginRoot)
	}
	if h.pluginData != "" {
		env = append(env, "CLAUDE_PLUGIN_DATA="+h.pluginData)
	}
	if r.EnvFile != "" && event == SessionStart {
		env = append(env, "CLAUDE_ENV_FILE="+r.EnvFile)
	}
	return env
}

func (r *Runner) notice(format string, args ...any) {
	if r.Notice != nil {
		r.Notice(fmt.Sprintf(format, args...))
	}
}

func (r *Runner) input(event string) input {
	mode := r.PermissionMode
	if mode == "" {
		mode = "default"
	}
	return input{SessionID: r.SessionID, TranscriptPath: r.TranscriptPath, Cwd: r.cwd(), PermissionMode: mode, HookEventName: event}
}

// answer is what a command that ran said.
type answer struct {
	event string
	// blocked: exit status 2, with stderr as the reason.
	blocked bool
	reason  string
	// out is the JSON answer; plain the stdout when it was not JSON.
	out   *output
	plain string
}

// call runs the command of h with in on stdin. An async hook, or one whose first line of
// stdout is the async answer, goes on in the background: call returns an answer that
// decides nothing, and what the command says when it ends reaches the model later (see
// asyncQueue).
func (r *Runner) call(ctx context.Context, h Hook, in input) (*answer, error) {
	return r.callWith(ctx, h, in, nil)
}

// callWith is call with the message the event is about (see Runner.Sync).
func (r *Runner) callWith(ctx context.Context, h Hook, in input, pending *llm.Message) (*answer, error) {
	if r.Sync != nil {
		if err := r.Sync(pending); err != nil {
			r.notice("%s hook %s: the transcript is not up to date: %v", in.HookEventName, h.Name(), err)
		}
	}
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	sp := spec{command: h.Command, args: h.Args, dir: r.Dir, env: r.env(h, in.HookEventName), stdin: data, timeout: h.timeout()}
	sp.command, sp.args = pluginPlaceholders(h, sp.command, sp.args)
	if h.pluginData != "" {
		if err := os.MkdirAll(h.pluginData, 0o700); err != nil {
			r.notice("%s hook %s: the plugin's data directory: %v", in.HookEventName, h.Name(), err)
		}
	}
	// A command runs under a context of its own, cancelled with the run's unless it went to
	// the background; its timeout still bounds it there.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var bg bool
	var mu sync.Mutex
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !bg {
			cancel()
		}
	})
	// A fail-closed hook is awaited: its answer is what guards the point.
	detach := func(line []byte) bool { return !h.FailClosed && asyncMarker(line) }
	run, detached := start(runCtx, sp, detach, h.async())
	mu.Lock()
	bg = detached
	mu.Unlock()
	if detached {
		r.async.add(r, h, in.HookEventName, run, cancel)
		return &answer{event: in.HookEventName}, nil
	}
	stopAfter()
	cancel()
	if run.err != nil {
		return nil, run.err
	}
	return r.answer(h, in.HookEventName, run.res)
}

// answer reads what a command that ended said.
func (r *Runner) answer(h Hook, event string, res result) (*answer, error) {
	a := &answer{event: event}
	if res.code == 2 {
		a.blocked, a.reason = true, strings.TrimSpace(strings.ToValidUTF8(string(res.stderr), "\uFFFD"))
		return a, nil
	}
	out, notes, err := parseOutput(event, res.stdout, h.FailClosed)
	if err != nil {
		return nil, &RunError{Kind: "output", Msg: "its answer on stdout is not valid: " + err.Error()}
	}
	for _, n := range notes {
		r.notice("%s hook %s: %s", event, h.Name(), n)
	}
	a.out = out
	if a.out == nil {
		a.plain = strings.TrimSpace(strings.ToValidUTF8(string(res.stdout), "\uFFFD"))
	} else if a.out.SystemMessage != "" {
		r.notice("%s hook %s: %s", event, h.Name(), a.out.SystemMessage)
	}
	return a, nil
}

// stop returns the request to stop the run of an answer with "continue": false.
func (a *answer) stop() error {
	if a.out == nil || a.out.Continue == nil || *a.out.Continue {
		return nil
	}
	reason := a.out.StopReason
	if reason == "" {
		reason = fmt.Sprintf("a %s hook said not to continue", a.event)
	}
	return hooks.StopRun(reason)
}

// context returns the context an answer adds: additionalContext, or plain stdout for the
// events whose plain stdout Claude Code adds as context.
func (a *answer) context() string {
	if a.out != nil && a.out.Specific != nil && a.out.Specific.AdditionalContext != "" {
		return capContext(a.out.Specific.AdditionalContext)
	}
	if a.event == UserPromptSubmit || a.event == SessionStart {
		return capContext(a.plain)
	}
	return ""
}

// maxContextBytes bounds the context one answer adds.
const maxContextBytes = 64 << 10

func capContext(s string) string {
	if len(s) <= maxContextBytes {
		return s
	}
	cut := maxContextBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[hook output cut: %d more bytes]", len(s)-cut)
}

// blockError is the refusal the model or the user reads.
func blockError(event, reason string) error {
	if reason == "" {
		return fmt.Errorf("Blocked by a %s hook.", event)
	}
	return fmt.Errorf("Blocked by a %s hook: %s", event, reason)
}

func (r *Runner) preToolUse(ctx context.Context, h Hook, ev *hooks.BeforeTool) error {
	tool := ev.Spec.Name
	toolInput, err := toClaude(tool, ev.Args, r.cwd())
	if err != nil {
		return err
	}
	in := r.input(PreToolUse)
	in.ToolName, in.ToolInput, in.ToolUseID = hookToolName(tool, ev.Args), toolInput, ev.Call.ID
	a, err := r.call(ctx, h, in)
	if err != nil {
		return err
	}
	if a.blocked {
		ev.Block = blockError(PreToolUse, a.reason)
		return nil
	}
	if err := a.stop(); err != nil {
		return err
	}
	if a.out == nil {
		return nil
	}
	decision, reason := map[string]string{"approve": "allow", "block": "deny"}[a.out.Decision], a.out.Reason
	s := a.out.Specific
	if s != nil && s.PermissionDecision != "" {
		decision, reason = s.PermissionDecision, s.PermissionDecisionReason
	}
	switch decision {
	case "deny":
		ev.Block = blockError(PreToolUse, reason)
		return nil
	case "ask":
		if err := r.ask(h, in, reason); err != nil {
			ev.Block = err
			return nil
		}
	}
	if s != nil && s.UpdatedInput != nil {
		args, err := fromClaude(tool, s.UpdatedInput, r.cwd())
		if err != nil {
			// Running the call as it was would ignore the hook: refuse it instead.
			ev.Block = fmt.Errorf("A PreToolUse hook rewrote the arguments of this call into ones rein cannot use, so the tool did not run: %w", err)
			return nil
		}
		ev.Args = args
	}
	return nil
}

// needsApproval is an "ask" nobody could answer.
type needsApproval struct{ msg string }

func (e *needsApproval) Error() string { return e.msg }
func (e *needsApproval) Unwrap() error { return kernel.ErrNeedsApproval }

// ask puts a PreToolUse "ask" to the user; nil lets the call run.
func (r *Runner) ask(h Hook, in input, reason string) error {
	why := ""
	if reason != "" {
		why = ": " + reason
	}
	if r.Confirm == nil {
		return &needsApproval{msg: fmt.Sprintf("A PreToolUse hook asks the user to confirm this call%s; nobody can be asked in this run.", why)}
	}
	args := string(in.ToolInput)
	if len(args) > 500 {
		args = args[:500] + "…"
	}
	yes, err := r.Confirm(fmt.Sprintf("rein: %s wants to run %s %s\n(PreToolUse hook %s asks first%s) Allow it once? [y/N] ",
		"the model", in.ToolName, strings.ToValidUTF8(args, "\uFFFD"), h.Name(), why))
	switch {
	case err != nil:
		return &needsApproval{msg: fmt.Sprintf("A PreToolUse hook asks the user to confirm this call%s; asking failed: %v", why, err)}
	case !yes:
		return errors.New("The user declined this call (a PreToolUse hook asked first); do not retry it: choose another approach, or ask the user what to do.")
	}
	return nil
}

func (r *Runner) postToolUse(ctx context.Context, h Hook, event string, ev *hooks.AfterTool) error {
	tool := ev.Call.Name
	toolInput, err := toClaude(tool, ev.Args, r.cwd())
	if err != nil {
		return err
	}
	in := r.input(event)
	in.ToolName, in.ToolInput, in.ToolUseID = hookToolName(tool, ev.Args), toolInput, ev.Call.ID
	if event == PostToolUseFailure {
		text, interrupted := failureText(tool, ev.Result)
		in.Error = text
		if interrupted {
			in.IsInterrupt = &interrupted
		}
	} else {
		in.ToolResponse = toolResponse(tool, toolInput, ev.Result)
	}
	a, err := r.call(ctx, h, in)
	if err != nil {
		return err
	}
	var feedback []string
	switch {
	case a.blocked:
		feedback = append(feedback, a.reason)
	case a.out != nil && a.out.Decision == "block":
		feedback = append(feedback, a.out.Reason)
	}
	if c := a.context(); c != "" {
		feedback = append(feedback, c)
	}
	if len(feedback) > 0 {
		res := *ev.Result
		res.Content = append(append([]llm.Part(nil), res.Content...), llm.Text("\n\n"+event+" hook feedback:\n"+strings.Join(feedback, "\n")))
		ev.Result = &res
	}
	return a.stop()
}

func (r *Runner) userPromptSubmit(ctx context.Context, h Hook, ev *hooks.BeforeAgentStart) error {
	in := r.input(UserPromptSubmit)
	prompt := ev.Prompt.Text()
	in.Prompt = &prompt
	a, err := r.call(ctx, h, in)
	if err != nil {
		return err
	}
	switch {
	case a.blocked:
		ev.Block = blockError(UserPromptSubmit, a.reason)
		return nil
	case a.out != nil && a.out.Decision == "block":
		ev.Block = blockError(UserPromptSubmit, a.out.Reason)
		return nil
	}
	if err := a.stop(); err != nil {
		return err
	}
	if c := a.context(); c != "" {
		p := *ev.Prompt
		p.Content = append(append([]llm.Part(nil), p.Content...), llm.Text("\n\n"+c))
		ev.Prompt = &p
	}
	return nil
}

func (r *Runner) sessionStart(ctx context.Context, h Hook, ev *hooks.SessionStart) error {
	in := r.input(SessionStart)
	in.Source, in.Model = r.source(), r.Model
	a, err := r.call(ctx, h, in)
	if err != nil {
		return err
	}
	if a.blocked { // Claude Code: shown to the user only
		r.notice("SessionStart hook %s: %s", h.Name(), a.reason)
		return nil
	}
	if err := a.stop(); err != nil {
		return err
	}
	if c := a.context(); c != "" {
		ev.System += "\n\n" + c
	}
	return nil
}

func (r *Runner) sessionEnd(ctx context.Context, h Hook, ev *hooks.SessionEnd) error {
	in := r.input(SessionEnd)
	in.Reason = endReason(ev.Reason)
	a, err := r.call(ctx, h, in)
	if err != nil {
		return err
	}
	if a.blocked {
		r.notice("SessionEnd hook %s: %s", h.Name(), a.reason)
	}
	return nil
}

// maxStopBlocks is how many times in a row Stop hooks may keep a run going; then the run
// ends regardless, as in Claude Code.
const maxStopBlocks = 8

func (r *Runner) stop(ctx context.Context, h Hook, ev *hooks.Stop) error {
	in := r.input(Stop)
	active := ev.Active
	last := ev.Message.Text()
	in.StopHookActive, in.LastAssistantMessage = &active, &last
	a, err := r.callWith(ctx, h, in, ev.Message)
	if err != nil {
		return err
	}
	switch {
	case a.blocked:
		ev.Continue = "Stop hook feedback:\n" + a.reason
	case a.out != nil && a.out.Decision == "block":
		ev.Continue = "Stop hook feedback:\n" + a.out.Reason
	}
	if a.out != nil && a.out.Continue != nil && !*a.out.Continue {
		// The run is ending anyway; "continue": false only keeps it from going on.
		ev.Continue = ""
		if a.out.StopReason != "" {
			r.notice("Stop hook %s: %s", h.Name(), a.out.StopReason)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ev.Active {
		r.stopBlocks = 0
	}
	if ev.Continue != "" {
		if r.stopBlocks++; r.stopBlocks > maxStopBlocks {
			ev.Continue = ""
			r.notice("Stop hook %s: the run ends anyway: Stop hooks kept it going %d times in a row", h.Name(), maxStopBlocks)
		}
	}
	return nil
}

func (r *Runner) preCompact(ctx context.Context, h Hook, ev *hooks.BeforeCompact) error {
	in := r.input(PreCompact)
	instructions := ev.Instructions
	in.Trigger, in.CustomInstructions = trigger(ev), &instructions
	a, err := r.call(ctx, h, in)
	if err != nil {
		return err
	}
	if a.blocked {
		ev.Cancel = blockError(PreCompact, a.reason)
		return nil
	}
	return a.stop()
}

// pluginPlaceholders replaces "${CLAUDE_PLUGIN_ROOT}" and "${CLAUDE_PLUGIN_DATA}" in a
// plugin hook's command and arguments.
func pluginPlaceholders(h Hook, command string, args []string) (string, []string) {
	var pairs []string
	if h.pluginRoot != "" {
		pairs = append(pairs, "${CLAUDE_PLUGIN_ROOT}", h.pluginRoot)
	}
	if h.pluginData != "" {
		pairs = append(pairs, "${CLAUDE_PLUGIN_DATA}", h.pluginData)
	}
	if len(pairs) == 0 {
		return command, args
	}
	rep := strings.NewReplacer(pairs...)
	args = slices.Clone(args)
	for i := range args {
		args[i] = rep.Replace(args[i])
	}
	return rep.Replace(command), args
}
