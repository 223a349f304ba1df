package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/telemetry"
	"github.com/reinhq/rein/internal/tui"
)

// wantsUI says whether this invocation opens the interactive UI: no prompt, no -p, no
// --mode, and both stdin and stdout are terminals. Anything else keeps print mode (a pipe
// without a prompt is still a usage error).
func wantsUI(e *env, cmd *cobra.Command, o *runOptions, args []string) bool {
	if len(args) > 0 || o.print || cmd.Flags().Changed("mode") {
		return false
	}
	in, ok := e.stdin.(*os.File)
	return ok && term.IsTerminal(int(in.Fd())) && isTerminal(e.stdout)
}

// runUI runs the interactive UI (package tui) on the terminal, its agents opened through
// package system like every other mode's.
func runUI(e *env, o *runOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	home, dir, tracer, flush, err := hostSetup(e, o)
	if err != nil {
		return err
	}
	defer flush()
	out := e.stdout.(*os.File) // wantsUI checked it
	w, h, _ := term.GetSize(int(out.Fd()))
	opts := tui.Options{Color: e.getenv("NO_COLOR") == "", Dark: true, Width: w, Height: h, Getenv: e.getenv}
	host := &uiHost{e: e, o: o, home: home, dir: dir, tracer: tracer}
	return tui.Run(e.ctx, host, e.stdin, e.stdout, os.Environ(), opts)
}

// uiHost opens the UI's runtimes through package system, from the command line's options
// and what the UI asked for (/model, /new).
type uiHost struct {
	e         *env
	o         *runOptions
	home, dir string
	tracer    *telemetry.Tracer

	mu sync.Mutex
	// system is the system prompt of the runtime opened last (its skills, for /skill:name).
	system *contextpack.Assembly
}

func (h *uiHost) Open(ctx context.Context, req tui.Request) (tui.Runtime, tui.Info, error) {
	o, e := h.o, h.e
	opts := system.Options{
		Provider: o.provider, Model: o.model, BaseURL: o.baseURL, APIKey: o.apiKey, Script: o.script,
		Tools: o.toolList(), NoTools: o.noTools, MaxTurns: o.maxTurns, MaxCost: o.maxCost,
		Dir: h.dir, Home: h.home, Getenv: e.getenv, Sandbox: o.sandbox,
		Observe: req.Observe, Inbox: req.Inbox, Tracer: h.tracer,
		Confirm: req.Confirm, Approve: approver(req.Approve), Notice: req.Notice,
	}
	if opts.Confirm == nil {
		opts.Confirm = terminalConfirm(e) // the first runtime opens before the UI runs
	}
	o.hostOptions(&opts, req.Provider, req.Model)
	opts.Thinking = llm.ThinkingLevel(req.Thinking)
	switch req.Mode {
	case tui.OpenStart:
		opts.Session = o.sessionChoice()
	case tui.OpenAgain:
		opts.Session = system.SessionChoice{Mode: system.SessionNone}
		if req.SessionDir != "" {
			opts.Session = system.SessionChoice{Mode: system.SessionAt, Ref: req.SessionDir}
		}
		opts.History, opts.HistoryUsage = req.History, req.Usage
	case tui.OpenResume:
		opts.Session = system.SessionChoice{Mode: system.SessionResume, Ref: req.Ref}
	case tui.OpenFork:
		opts.Session = system.SessionChoice{Mode: system.SessionFork, Ref: req.Ref}
	case tui.OpenNew:
		opts.Session = system.SessionChoice{Mode: system.SessionNew}
		if o.noSession {
			opts.Session.Mode = system.SessionNone
		}
	}
	rt, err := system.Open(ctx, opts)
	if err != nil {
		return nil, tui.Info{}, err
	}
	h.mu.Lock()
	h.system = rt.System
	h.mu.Unlock()
	in := h.info(ctx, rt)
	in.Thinking = req.Thinking
	return rt, in, nil
}

// info describes rt for the UI's status line.
func (h *uiHost) info(ctx context.Context, rt *system.Runtime) tui.Info {
	in := tui.Info{Provider: rt.Model.Provider, Model: rt.Model.ID, ContextWindow: rt.Model.ContextWindow,
		Resumed: rt.Resumed, Sandboxed: rt.Sandboxed, Trusted: rt.Trusted}
	if rt.System != nil {
		in.Diagnostics = rt.System.Diagnostics
	}
	if s := rt.Session; s != nil {
		in.SessionID, in.SessionDir = s.ID(), s.Dir()
	}
	if b, err := (gitx.Runner{Dir: h.dir}).Output(ctx, "branch", "--show-current"); err == nil {
		in.Branch = strings.TrimSpace(b)
	}
	return in
}

// approver adapts the UI's approval question to the permission gate's.
func approver(ask func(context.Context, tui.Approval) (tui.Answer, error)) func(context.Context, system.Approval) (system.Answer, error) {
	if ask == nil {
		return nil
	}
	return func(ctx context.Context, a system.Approval) (system.Answer, error) {
		ans, err := ask(ctx, tui.Approval{Tool: a.Tool, Args: a.Args, Part: a.Part, Rule: a.Rule})
		if err != nil {
			return system.Answer{}, fmt.Errorf("asking for approval in the UI: %w", err)
		}
		return system.Answer{Allow: ans.Allow, Reason: ans.Reason}, nil
	}
}
