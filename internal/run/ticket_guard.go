package run

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/command"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/tool"
)

// ticketGuard names the refusals of a ticket session's tool calls with their blocker codes
// and counts them for the attempt record. The tools refuse (workspace confinement, the role's
// surface, run_command's approved ids); the kernel hands the guard every call answered with
// an error, with the error value (agentspec.Spec.OnToolError), which the guard classifies by
// its type — a *refusal.Error's code, tool.ErrOutsideWorkspace, a validation error, the tool
// the call named and the path it named — never by the text of the message. A context hook
// then prefixes each such refusal, as the model sees it, with its code (what was recorded
// stays as it was), and each refused call counts once.
type ticketGuard struct {
	role string // RoleWriter or RoleReview
	dir  string // the session's workspace (set by runTicketSession)
	mu   sync.Mutex
	seen map[string]refusedCall // by call id
}

// refusedCall is the blocker of a refused call; shown says the error's text starts with it.
type refusedCall struct {
	code  string
	shown bool
}

func newTicketGuard(role string) *ticketGuard {
	return &ticketGuard{role: role, seen: map[string]refusedCall{}}
}

// count records how call id was refused.
func (g *ticketGuard) count(id string, c refusedCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen[id] = c
}

// counts returns the refused calls by code (nil when none).
func (g *ticketGuard) counts() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.seen) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, c := range g.seen {
		out[c.code]++
	}
	return out
}

// reviewTool reports whether name is one of the tools a review session is offered.
func reviewTool(name string) bool {
	return slices.Contains(policy.ReadOnlyTools, name) || name == contract.ReviewToolName
}

// fileTools are the writer's tools that take workspace paths.
var fileTools = []string{policy.ToolRead, policy.ToolWrite, policy.ToolEdit, policy.ToolGrep, policy.ToolFind, policy.ToolLs}

// refused implements agentspec.Spec.OnToolError: a call answered with err is counted under
// the blocker it is, if any.
func (g *ticketGuard) refused(call *llm.ToolCall, err error) {
	if code := g.classify(call, err); code != "" {
		re, ok := err.(*refusal.Error)
		g.count(call.ID, refusedCall{code: code, shown: ok && string(re.Code) == code})
	}
}

// classify names the blocker of call, answered with err, or "".
func (g *ticketGuard) classify(call *llm.ToolCall, err error) string {
	code, _ := refusal.CodeOf(err)
	switch string(code) {
	case BlockWriterUnapprovedBash, BlockWriterPathEscape, BlockReviewMutation:
		return string(code)
	}
	switch g.role {
	case RoleReview:
		if !reviewTool(call.Name) || code == policy.CodeReviewMutation || code == policy.CodeToolNotInRole {
			return BlockReviewMutation
		}
	case RoleWriter:
		switch {
		case call.Name == policy.ToolBash || code == command.CodeUnknownCommand:
			return BlockWriterUnapprovedBash
		case call.Name == policy.ToolRunCommand && errors.As(err, new(*tool.ValidationError)):
			return BlockWriterUnapprovedBash // anything but {"id": …}: a command line, a shell
		case slices.Contains(fileTools, call.Name) && g.escapes(call, err):
			return BlockWriterPathEscape
		}
	}
	return ""
}

// escapes reports whether a file tool's call was refused for a path outside the workspace:
// the file tools' own confinement (tool.ErrOutsideWorkspace, a symbolic link leading out
// included), or a protected-path refusal (rein's home directory, which holds the worktree:
// a relative path climbing out of the worktree lands there) of a path the call named outside
// the workspace.
func (g *ticketGuard) escapes(call *llm.ToolCall, err error) bool {
	if errors.Is(err, tool.ErrOutsideWorkspace) {
		return true
	}
	code, _ := refusal.CodeOf(err)
	if code != pathrule.CodeProtectedPath && code != policy.CodeDenied {
		return false
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(call.Arguments), &args) != nil || args.Path == "" || g.dir == "" {
		return false
	}
	p := filepath.FromSlash(strings.TrimPrefix(args.Path, "@"))
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.dir, p)
	}
	rel, err := filepath.Rel(g.dir, filepath.Clean(p))
	return err != nil || !filepath.IsLocal(rel) && rel != "."
}

// Context implements kernel.ContextHook: every refused tool result the guard counted gets
// its code in front, unless its text starts with it already.
func (g *ticketGuard) Context(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	out := msgs
	copied := false
	for i, m := range msgs {
		if m.Role != llm.RoleTool || !m.IsError {
			continue
		}
		c := g.refusal(m.ToolCallID)
		if c.code == "" || c.shown {
			continue
		}
		if !copied {
			out, copied = slices.Clone(msgs), true
		}
		m.Content = append([]llm.Part{llm.Text(c.code + ": the call was blocked. ")}, m.Content...)
		out[i] = m
	}
	return out, nil
}

// refusal returns how call id was refused (no code: not refused).
func (g *ticketGuard) refusal(id string) refusedCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[id]
}

// refusals returns a copy of the counts, for an attempt record.
func (g *ticketGuard) refusals() map[string]int {
	c := g.counts()
	if c == nil {
		return nil
	}
	return maps.Clone(c)
}
