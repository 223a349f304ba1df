package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/watchdog"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/termtext"
	"github.com/reinhq/rein/internal/wire"
)

// runOptions are the flags of a run.
type runOptions struct {
	print    bool
	mode     string
	provider string
	model    string
	baseURL  string
	apiKey   string
	script   string
	tools    string
	noTools  bool
	maxTurns int
	maxCost  float64
	retries  int
	idle     time.Duration
	sandbox  bool
	trace    string
	quiet    bool

	noSession bool
	cont      bool
	resume    string
	sessionAt string
	fork      string

	trust trustFlags
}

func (o *runOptions) register(c *cobra.Command) {
	f := c.Flags()
	f.BoolVarP(&o.print, "print", "p", false, "print mode: run the prompt (arguments or stdin) and print the final answer")
	f.StringVar(&o.mode, "mode", "print", "output mode: print (final text), json (one JSON event per line) or rpc (JSON commands on stdin, responses and events on stdout)")
	f.StringVar(&o.provider, "provider", "", "model provider: anthropic, openai, openai-compat or script")
	f.StringVar(&o.model, "model", "", "model id (see rein models); default: the provider's default")
	f.StringVar(&o.baseURL, "base-url", "", "API base URL (required for openai-compat, e.g. http://localhost:11434/v1)")
	f.StringVar(&o.apiKey, "api-key", "", "API key (default: $ANTHROPIC_API_KEY / $OPENAI_API_KEY, then $REIN_HOME/auth.json)")
	f.StringVar(&o.script, "script", "", "scenario file for the offline script provider")
	f.StringVar(&o.tools, "tools", "", "comma-separated tools to offer (default: read,write,edit,bash,grep,find,ls)")
	f.BoolVar(&o.noTools, "no-tools", false, "offer no tools")
	f.IntVar(&o.maxTurns, "max-turns", 0, "stop after this many model turns (0: no limit)")
	f.Var((*costFlag)(&o.maxCost), "max-cost", "stop once the run has cost this many US dollars (0: no limit)")
	f.BoolVar(&o.noSession, "no-session", false, "keep the session in memory only (nothing under $REIN_HOME/sessions)")
	f.BoolVarP(&o.cont, "continue", "c", false, "continue the latest session of this directory")
	f.StringVar(&o.resume, "resume", "", "continue the session with this id (or unique id prefix)")
	f.StringVar(&o.sessionAt, "session", "", "use the session with this id, or the session directory at this path (created if missing)")
	f.StringVar(&o.fork, "fork", "", "start a new session from session ID, at ENTRY if given (ID[@ENTRY]); the parent is untouched")
	f.BoolVar(&o.sandbox, "sandbox", false, "run bash in a bubblewrap sandbox: no network, only this directory writable, $REIN_HOME hidden (fails if bwrap is missing)")
	f.StringVar(&o.trace, "trace", "", traceUsage)
	f.BoolVar(&o.quiet, "quiet", false, "print mode: no live status line and no tool calls on stderr (shown only when stderr is a terminal)")
	f.IntVar(&o.retries, "max-retries", llm.DefaultRetryPolicy.MaxAttempts-1, "retries of a failed model call (rate limit, overload, 5xx, connection errors, incomplete streams, timeouts)")
	f.DurationVar(&o.idle, "stream-idle-timeout", watchdog.DefaultIdle, "give up on a model response (and retry it) after this long without a byte from the provider, headers included")
	o.trust.register(c)
}

// costFlag is a cost budget flag: a finite number of US dollars, 0 or positive, refused at
// parse time otherwise (NaN, Inf, -0, 1e400, negatives).
type costFlag float64

func (f *costFlag) String() string { return strconv.FormatFloat(float64(*f), 'g', -1, 64) }
func (f *costFlag) Type() string   { return "usd" }

func (f *costFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number of US dollars: %w", err)
	}
	if err := kernel.CheckCost(v); err != nil {
		return err
	}
	*f = costFlag(v)
	return nil
}

func (o *runOptions) validate() error {
	if o.mode != "print" && o.mode != "json" && o.mode != "rpc" {
		return fmt.Errorf("%w: --mode %q: want print, json or rpc", ErrUsage, o.mode)
	}
	if o.maxTurns < 0 {
		return fmt.Errorf("%w: --max-turns must not be negative", ErrUsage)
	}
	if o.retries < 0 {
		return fmt.Errorf("%w: --max-retries must not be negative", ErrUsage)
	}
	if o.idle <= 0 {
		return fmt.Errorf("%w: --stream-idle-timeout must be positive (e.g. 30s, 5m)", ErrUsage)
	}
	if err := kernel.CheckCost(o.maxCost); err != nil {
		return fmt.Errorf("%w: --max-cost: %w", ErrUsage, err)
	}
	n := 0
	for _, set := range []bool{o.noSession, o.cont, o.resume != "", o.sessionAt != "", o.fork != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w: --no-session, --continue, --resume, --session and --fork exclude each other", ErrUsage)
	}
	if err := checkTrace(o.trace); err != nil {
		return err
	}
	if o.noTools && o.tools != "" {
		return fmt.Errorf("%w: --tools and --no-tools exclude each other", ErrUsage)
	}
	if _, err := o.trust.choice(); err != nil {
		return err
	}
	return nil
}

func (o *runOptions) sessionChoice() system.SessionChoice {
	switch {
	case o.noSession:
		return system.SessionChoice{Mode: system.SessionNone}
	case o.cont:
		return system.SessionChoice{Mode: system.SessionContinue}
	case o.resume != "":
		return system.SessionChoice{Mode: system.SessionResume, Ref: o.resume}
	case o.sessionAt != "":
		if strings.ContainsRune(o.sessionAt, os.PathSeparator) {
			return system.SessionChoice{Mode: system.SessionAt, Ref: o.sessionAt}
		}
		return system.SessionChoice{Mode: system.SessionResume, Ref: o.sessionAt}
	case o.fork != "":
		return system.SessionChoice{Mode: system.SessionFork, Ref: o.fork}
	}
	return system.SessionChoice{Mode: system.SessionNew}
}

// resuming says whether the run continues an existing conversation, so no prompt is needed.
func (o *runOptions) resuming() bool { return o.cont || o.resume != "" || o.sessionAt != "" }

func (o *runOptions) toolList() []string {
	if o.tools == "" {
		return nil
	}
	var out []string
	for _, t := range strings.Split(o.tools, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// readPrompt takes the prompt from the arguments, else from stdin when it is not a terminal.
// With optional set (resuming a session), no prompt at all is allowed and returns "".
func readPrompt(e *env, args []string, optional bool) (string, error) {
	if len(args) > 0 {
		return strings.Join(args, " "), nil
	}
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if optional {
			return "", nil
		}
		return "", fmt.Errorf("%w: no prompt: pass one (rein -p \"...\") or pipe it on stdin; without -p, rein opens the interactive UI only when stdin and stdout are both terminals", ErrUsage)
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, 16<<20))
	if err != nil {
		return "", fmt.Errorf("%w: reading the prompt from stdin: %w", ErrUsage, err)
	}
	p := strings.TrimSpace(string(data))
	if p == "" && !optional {
		return "", fmt.Errorf("%w: the prompt is empty: pass one as an argument or on stdin", ErrUsage)
	}
	return p, nil
}

func runPrompt(e *env, o *runOptions, args []string) error {
	if o.mode == "rpc" {
		if err := o.validate(); err != nil {
			return err
		}
		return runRPC(e, o, args)
	}
	var jsonOut *jsonWriter
	if o.mode == "json" {
		jsonOut = &jsonWriter{out: wire.NewWriter(e.stdout)}
	}
	err := o.validate()
	var out *kernel.Outcome
	var rt *system.Runtime
	if err == nil {
		var prompt string
		if prompt, err = readPrompt(e, args, o.resuming()); err == nil {
			rt, out, err = runAgent(e, o, prompt, jsonOut)
		}
	}
	if jsonOut != nil {
		jsonOut.result(out, rt, err)
		if err != nil {
			return &reportedError{err}
		}
		return nil
	}
	if err != nil {
		if errors.Is(err, kernel.ErrNeedsApproval) && out != nil && out.Final != nil {
			// The run went on without the refused calls; show what the model made of it.
			printFinal(e, out)
		}
		return err
	}
	printFinal(e, out)
	return nil
}

func printFinal(e *env, out *kernel.Outcome) {
	text := out.Final.Text()
	if isTerminal(e.stdout) {
		// On a terminal the model's text is shown, never interpreted; a pipe gets it as it is.
		text = termtext.Visible(text)
	}
	fmt.Fprint(e.stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(e.stdout)
	}
}

func runAgent(e *env, o *runOptions, prompt string, jsonOut *jsonWriter) (*system.Runtime, *kernel.Outcome, error) {
	home, err := system.Home(e.getenv)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, nil, err
	}
	opts := system.Options{
		Provider: o.provider, Model: o.model, BaseURL: o.baseURL, APIKey: o.apiKey, Script: o.script,
		Tools: o.toolList(), NoTools: o.noTools, MaxTurns: o.maxTurns, MaxCost: o.maxCost, MCP: true, Version: version,
		Dir: dir, Home: home, Getenv: e.getenv, Session: o.sessionChoice(), Sandbox: o.sandbox,
		Confirm: terminalConfirm(e), Notice: notice(e),
	}
	opts.Trust, _ = o.trust.choice() // checked by validate
	opts.Retry = llm.DefaultRetryPolicy
	opts.Retry.MaxAttempts = o.retries + 1
	opts.StreamIdleTimeout = o.idle
	var prog *progress
	if jsonOut != nil {
		opts.Observe = jsonOut.event
	} else if prog = newProgress(e.stderr, o.quiet); prog != nil {
		opts.Observe, opts.Notice, opts.Confirm = prog.event, prog.notice(opts.Notice), prog.confirm(opts.Confirm)
	}
	tracer, flush, err := startTracer(e, o.trace)
	if err != nil {
		return nil, nil, err
	}
	defer flush()
	opts.Tracer = tracer
	rt, err := system.Open(e.ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	defer rt.Close()
	for _, d := range rt.System.Diagnostics {
		fmt.Fprintf(e.stderr, "rein: context: %s\n", d)
	}
	if jsonOut != nil && rt.Session != nil {
		jsonOut.session = rt.Session.ID()
	}
	var out *kernel.Outcome
	if prog != nil {
		prog.begin()
	}
	if prompt == "" {
		out, err = rt.Continue(e.ctx)
	} else {
		out, err = rt.Run(e.ctx, llm.UserText(prompt))
	}
	if prog != nil {
		prog.finish(out, err)
	}
	if errors.Is(err, system.ErrNothingPending) {
		err = fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if errors.Is(err, kernel.ErrNeedsApproval) {
		err = fmt.Errorf("%w: %w (to let such calls run, add allow rules to permissions in settings.json or drop the ask rules, or run rein on a terminal to be asked)", ErrBlocked, err)
	}
	return rt, out, err
}

// jsonWriter writes --mode json lines; events from parallel tools arrive serialized already.
type jsonWriter struct {
	out     *wire.Writer
	conv    wire.Converter
	session string
}

func (w *jsonWriter) event(ev kernel.Event) {
	if we, ok := w.conv.Convert(ev); ok {
		_ = w.out.Write(we)
	}
}

func (w *jsonWriter) result(out *kernel.Outcome, rt *system.Runtime, err error) {
	r := wire.Result{V: wire.Version, Type: wire.TypeResult, Status: "completed", ExitCode: ExitCode(err)}
	if out != nil {
		r.Status = string(out.Status)
		r.Turns = out.Turns
		r.Usage = wire.NewUsage(out.Usage)
		if out.Final != nil && !out.Final.Failed() {
			// A failed message's text (a cut stream's partial answer) is no answer.
			r.Text = out.Final.Text()
		}
	} else if err != nil {
		r.Status = "error"
	}
	if rt != nil {
		r.Provider, r.Model = rt.Model.Provider, rt.Model.ID
	}
	r.Session = w.session
	if err != nil {
		r.Error = err.Error()
	}
	_ = w.out.Write(r)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
