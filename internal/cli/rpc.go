package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/rpc"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/telemetry"
)

// hostSetup is what a mode that opens runtimes for a host needs first: rein's home, the
// working directory, and the tracer (flush it when the mode ends).
func hostSetup(e *env, o *runOptions) (home, dir string, tracer *telemetry.Tracer, flush func(), err error) {
	if home, err = system.Home(e.getenv); err != nil {
		return
	}
	if dir, err = os.Getwd(); err != nil {
		return
	}
	tracer, flush, err = startTracer(e, o.trace)
	return
}

// hostOptions completes the options of a runtime an interactive host (the UI, an RPC client)
// opens: the command line's trust, retries and idle timeout, and the provider and model the
// host asked for. Another provider than the command line's drops its endpoint, key and
// scenario, which were for the old one.
func (o *runOptions) hostOptions(opts *system.Options, provider, model string) {
	opts.Trust, _ = o.trust.choice() // checked by validate
	opts.Retry = llm.DefaultRetryPolicy
	opts.Retry.MaxAttempts = o.retries + 1
	opts.StreamIdleTimeout = o.idle
	if provider != "" && provider != o.provider && !(provider == llm.ProviderScript && o.script != "") {
		opts.BaseURL, opts.APIKey, opts.Script = "", "", ""
	}
	if provider != "" || model != "" {
		opts.Provider, opts.Model = provider, model
	}
}

// runRPC serves the RPC protocol (package rpc) on stdin and stdout until stdin ends.
func runRPC(e *env, o *runOptions, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: --mode rpc takes its prompts on stdin as commands, not as arguments", ErrUsage)
	}
	home, dir, tracer, flush, err := hostSetup(e, o)
	if err != nil {
		return err
	}
	defer flush()
	return rpc.Serve(e.ctx, &rpcHost{e: e, o: o, home: home, dir: dir, tracer: tracer}, e.stdin, e.stdout, rpc.Options{Log: e.stderr})
}

// rpcHost opens the RPC server's runtimes through package system, from the command line's
// options and what the client asked for.
type rpcHost struct {
	e         *env
	o         *runOptions
	home, dir string
	tracer    *telemetry.Tracer
}

func (h *rpcHost) Open(ctx context.Context, req rpc.OpenRequest) (*rpc.Runtime, error) {
	o, e := h.o, h.e
	opts := system.Options{
		Provider: o.provider, Model: o.model, BaseURL: o.baseURL, APIKey: o.apiKey, Script: o.script,
		Tools: o.toolList(), NoTools: o.noTools, MaxTurns: o.maxTurns, MaxCost: o.maxCost, MCP: true, Version: version,
		Dir: h.dir, Home: h.home, Getenv: e.getenv, Sandbox: o.sandbox,
		Observe: req.Observe, Inbox: req.Inbox, Tracer: h.tracer, Notice: notice(e),
		// stdin carries the protocol: nobody can be asked, so "ask" rules refuse.
		Confirm: nil,
	}
	o.hostOptions(&opts, req.Provider, req.Model)
	switch req.Mode {
	case rpc.OpenStart:
		opts.Session = o.sessionChoice()
	case rpc.OpenAgain:
		opts.Session = system.SessionChoice{Mode: system.SessionNone}
		if req.SessionDir != "" {
			opts.Session = system.SessionChoice{Mode: system.SessionAt, Ref: req.SessionDir}
		}
	case rpc.OpenNew:
		opts.Session = system.SessionChoice{Mode: system.SessionNew}
		if o.noSession {
			opts.Session.Mode = system.SessionNone
		}
	case rpc.OpenFork:
		ref := req.SessionID
		if req.Entry != "" {
			ref += "@" + req.Entry
		}
		opts.Session = system.SessionChoice{Mode: system.SessionFork, Ref: ref}
	}
	opts.History, opts.HistoryUsage = req.History, req.Usage
	rt, err := system.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	for _, d := range rt.System.Diagnostics {
		fmt.Fprintf(e.stderr, "rein: context: %s\n", d)
	}
	return &rpc.Runtime{Agent: rt, Session: rt.Session, Model: rt.Model, Close: rt.Close}, nil
}
