package tui

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// Runtime is one open agent with its session, as the UI drives it (package system's Runtime
// implements it): the same lifecycle as every other mode.
type Runtime interface {
	// Begin opens one run for prompt (nil: continue) and returns the function that runs and
	// ends it; when its context is cancelled, the cancel is recorded before the run stops.
	Begin(prompt *llm.Message) (func(context.Context) (*kernel.Outcome, error), error)
	// Cancel records durably that the run in progress is being cancelled, before the caller
	// signals it.
	Cancel(reason string) error
	// Compact summarizes the older part of the conversation.
	Compact(ctx context.Context, instructions string) (before, after []llm.Message, err error)
	// Context is the conversation the next run continues; Usage what it cost.
	Context() []llm.Message
	Usage() llm.Usage
	// Head is the session ledger's last sequence number and hash (zero without a session).
	Head() (int64, string)
	// Close ends the agent and releases the session.
	Close() error
}

// OpenMode says which session a [Request] wants.
type OpenMode int

const (
	OpenStart  OpenMode = iota // as the command line says (new, -c, --resume, --fork)
	OpenAgain                  // the current session (SessionDir; none in memory) with another model
	OpenNew                    // a new session (in memory when the command line said so)
	OpenResume                 // the existing session Ref names (an id or a directory: /resume)
	OpenFork                   // a new session forked from Ref = ID[@ENTRY] (/fork, /tree)
)

// Request asks the [Host] for a runtime.
type Request struct {
	Mode OpenMode
	// SessionDir is the session an OpenAgain reopens ("" for a run without a session).
	SessionDir string
	// Ref names the session an OpenResume opens, or ID[@ENTRY] an OpenFork forks.
	Ref string
	// Thinking is the reasoning effort (off, minimal, low, medium, high; "" the configured).
	Thinking string
	// Provider and Model override the configured model when not empty (/model).
	Provider, Model string
	// History and Usage are the conversation an OpenAgain without a session continues.
	History []llm.Message
	Usage   llm.Usage
	// Observe receives the agent's events; Inbox is polled for queued messages.
	Observe func(kernel.Event)
	Inbox   kernel.Inbox
	// Confirm asks a yes/no question (trust, hooks) in the UI; nil before the UI runs (the
	// host asks on the plain terminal then).
	Confirm func(question string) (bool, error)
	// Approve answers the calls an "ask" permission rule holds.
	Approve func(ctx context.Context, a Approval) (Answer, error)
	// Notice shows the user one line (a recovered session, a hook's message) in the
	// conversation.
	Notice func(string)
}

// Info describes an open runtime for the status line and the slash commands.
type Info struct {
	Provider, Model string
	// Thinking is the reasoning effort asked of the model ("" the configured default).
	Thinking string
	// ContextWindow is the model's context window in tokens (0: unknown).
	ContextWindow int
	// SessionID and SessionDir name the session ("" without one).
	SessionID, SessionDir string
	// Resumed says the session existed before.
	Resumed bool
	// Branch is the workspace's git branch ("" outside git).
	Branch string
	// Sandboxed: bash runs in the OS sandbox; Trusted: the project's own rein files loaded.
	Sandboxed, Trusted bool
	// Diagnostics say what the context assembly skipped or cut.
	Diagnostics []string
}

// Host opens the runtimes the UI drives; package cli implements it over package system.
type Host interface {
	Open(ctx context.Context, req Request) (Runtime, Info, error)
}

// Approval is a call an "ask" permission rule holds.
type Approval struct {
	Tool string
	Args json.RawMessage
	// Part is what the rule matched (the command, the path); Rule the rule as written.
	Part, Rule string
}

// Answer is the user's answer to an [Approval].
type Answer struct {
	Allow bool
	// Reason is the user's reason for a denial; it reaches the model.
	Reason string
}
