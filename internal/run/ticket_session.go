package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// WriterRequestPrefix and ReviewRequestPrefix start every ticket writer and review request
// of run id; the context hook cuts each model request there.
func WriterRequestPrefix(id string) string { return "Ticket writer request for run " + id }
func ReviewRequestPrefix(id string) string { return "Ticket review request for run " + id }

// ticketSession is one fresh session of a ticket's writer or reviewer.
type ticketSession struct {
	stage, role, ticket string
	n                   int
	pol                 ModelPolicy
	left                budgetLeft
	workspace           string
	sid, dir            string // session id; directory relative to $REIN_HOME
	system, prefix      string
	request             string
	packBytes           int
	tools               []tool.Tool
	standard            []string
	reads               agentspec.ReadScope
	guard               *ticketGuard
	// outcome settles the attempt once the session ended: nil when accepted.
	outcome func() error
}

// ticketSessionPlace returns the session id and directory (relative to $REIN_HOME) of a
// ticket attempt; a directory a crash left before its started record became durable is
// kept as evidence and the session goes beside it.
func (r *Run) ticketSessionPlace(env Env, stage, ticket string, n int) (sid, dir string) {
	short := map[string]string{StageTicketExecution: "writer", StageTicketReview: "review"}[stage]
	sid = fmt.Sprintf("%s-%s-%s-%d", r.ID, ticket, short, n)
	base := filepath.Join("runs", r.ID, "tickets", ticket)
	dir = filepath.Join(base, fmt.Sprintf("%s-%d", short, n))
	for k := 2; ; k++ {
		if _, err := os.Lstat(filepath.Join(env.Home, dir)); errors.Is(err, os.ErrNotExist) {
			return sid, dir
		}
		dir = filepath.Join(base, fmt.Sprintf("%s-%d.%d", short, n, k))
	}
}

// runTicketSession runs s and settles its attempt: accepted when s.outcome says so, failed
// with its cause otherwise. An error means the attempt is not settled (resume settles it).
func (r *Run) runTicketSession(ctx context.Context, env Env, s ticketSession) (TicketAttempt, error) {
	a := TicketAttempt{Ticket: s.ticket, Model: modelName(s.pol), Attempt: Attempt{Stage: s.stage, Attempt: s.n, PackBytes: s.packBytes}}
	a.Tools = slices.Clone(s.standard)
	for _, t := range s.tools {
		a.Tools = append(a.Tools, t.Spec().Name)
	}
	if env.Agents == nil {
		return a, fmt.Errorf("%w: this environment builds no agents", ErrNotRunnable)
	}
	s.guard.dir = s.workspace
	env.crash("ticket-session")
	agent, err := env.Agents.Agent(ctx, agentspec.Spec{
		Role: s.role, Workspace: s.workspace, SessionDir: filepath.Join(env.Home, s.dir), SessionID: s.sid,
		Model:  agentspec.Model{Provider: s.pol.Provider, Model: s.pol.Model, BaseURL: s.pol.BaseURL, Script: s.pol.Script, Thinking: llm.ThinkingLevel(s.pol.Thinking)},
		System: s.system, Tools: s.tools, Standard: s.standard, Reads: s.reads,
		MaxTurns: s.left.turns, MaxUsageTokens: s.left.tokens, Deadline: time.Now().Add(s.left.elapsed),
		ContextHooks: []kernel.ContextHook{turnReservation{r: r, env: env, sid: s.sid, role: s.role}, contextpack.CutAtPrefix{Prefix: s.prefix}, s.guard},
		OnToolError:  s.guard.refused,
		OnRequest:    a.measure,
		Now:          env.now, LedgerFS: env.SessionFS,
	})
	if err != nil {
		return a, err
	}
	defer agent.Close()
	start := env.now()
	r.beginLive(env, s.role, s.sid)
	out, err := agent.Run(ctx, llm.UserText(s.request))
	if err != nil && (out == nil || !errors.As(err, new(*kernel.BudgetError)) && providerFailure(err) == nil) {
		return a, err
	}
	a.Refusals = s.guard.refusals()
	a.settle(env.now().Sub(start), out, SessionAnchor{ID: s.sid, Dir: filepath.ToSlash(s.dir)}, agent, s.outcome())
	if r.liveRefused(s.sid) && a.Turns > 0 {
		a.Turns-- // the kernel counted the turn the shared budget refused; no model call was made
	}
	return a, nil
}
