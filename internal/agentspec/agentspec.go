// Package agentspec is what a caller outside the composition root asks an agent to be, and
// the small interface of the agent it gets back.
//
// A delivery run (package run) never builds an agent itself: it describes one — the role, the
// workspace, the model policy, a fresh session, the contract tools the stage defines, the
// limits — and asks package system, which builds it the one way every agent of rein is built:
// the model wrapped in retries, the role's tool surface over a confined workspace, the
// permission gate, the configured hooks, telemetry and the session with its lifecycle records.
// This package holds only data and one interface, so that run imports no tool, provider or
// model package, and system imports nothing of run.
package agentspec

import (
	"context"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Model names the model of an agent: a provider, a model id (empty: the provider's default), a
// base URL for OpenAI-compatible servers and, for the script provider, a scenario file relative
// to the workspace. Keys are never part of it: the composition root resolves them.
type Model struct {
	Provider string
	Model    string
	BaseURL  string
	Script   string
	Thinking llm.ThinkingLevel
}

// Spec describes one agent. Every field but the limits is required.
type Spec struct {
	// Role is the role whose tool surface the agent gets (policy.Role names: workflow, writer,
	// review).
	Role string
	// Workspace is the directory the agent's tools are confined to.
	Workspace string
	Model     Model
	// SessionDir is the directory of the agent's fresh session (it must not exist yet) and
	// SessionID the session's id.
	SessionDir string
	SessionID  string
	// System is the agent's whole system prompt (no project context is assembled around it).
	System string
	// Tools are offered in addition to the role's standard tools (a stage's contract tools);
	// the role's surface must allow them.
	Tools []tool.Tool
	// Standard names the role's standard tools the agent is offered, so that a stage gets only
	// the tools it needs (nil: every tool of the role's surface; empty: none, only Tools). The
	// role's surface still filters them.
	Standard []string
	// Reads bounds what the agent's read tools (read, grep, find, ls) may read, beyond the
	// workspace and the permission rules; the zero value adds no bound.
	Reads ReadScope
	// Limits: model turns, tokens (input, output and cache) and a deadline; zero means none.
	MaxTurns       int
	MaxUsageTokens int
	Deadline       time.Time
	// ContextHooks may replace each request's messages (never what is recorded).
	ContextHooks []kernel.ContextHook
	// OnToolError, when set, is told of every tool call answered with an error, with the
	// error value itself (a *refusal.Error keeps its code): how a caller classifies refused
	// calls by type, never by the text the model reads (kernel.Config.OnToolError).
	OnToolError func(call *llm.ToolCall, err error)
	// Gate, when set, is consulted after the permission gate allowed a call, before it runs
	// (a loop's human gate); its refusal is the call's error result.
	Gate kernel.Gate
	// OnRequest, when set, sees every model request as the kernel hands it to the model (once
	// per call, before retries): what a delivery run measures its request bytes from. It
	// must not keep or change the request.
	OnRequest func(*llm.Request)
	// Now is the session ledger's clock (nil: time.Now); LedgerFS its filesystem (nil: the OS).
	// Both are test seams.
	Now      func() time.Time
	LedgerFS ledger.FS
}

// ReadScope is an input boundary the read tools enforce. It is judged on the real path of every
// file they open or list — every symbolic link resolved, so a link into a bounded-off path is
// refused as the path itself is — and, while a scope is set, a file with more than one hard
// link is refused, since its other names are unknown. A refused read is a tool result the
// model sees, naming the boundary; a file a directory search meets outside the scope is left
// out. Paths are workspace-relative, with "/" separators.
type ReadScope struct {
	// Name says what the boundary is, for the refusal ("the specification stage's pack").
	Name string
	// Only, when not nil, is every file the tools may read; nothing else can be read or
	// listed, not even the directories holding these files.
	Only []string
	// Deny lists paths the tools may not read; each covers everything below it, and is
	// matched ignoring case.
	Deny []string
}

// IsZero reports whether s bounds nothing.
func (s ReadScope) IsZero() bool { return s.Only == nil && len(s.Deny) == 0 }

// Agent is a built agent with its own session.
type Agent interface {
	// Run runs prompt as one run of the agent's session: the run's begin record, the loop, and
	// the end record with the run's status.
	Run(ctx context.Context, prompt llm.Message) (*kernel.Outcome, error)
	// Head is the session ledger's last sequence number and hash.
	Head() (seq int64, hash string)
	// Close ends the agent (its session_end hooks run) and releases the session and workspace.
	Close() error
}
