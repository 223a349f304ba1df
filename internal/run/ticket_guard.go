package run

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/run/contract"
)

// ticketGuard names the refusals of a ticket session's tool calls with their blocker codes
// and counts them for the attempt record. The tools refuse (workspace confinement, the role's
// surface, run_command's approved ids); the guard is a context hook that prefixes each such
// refusal, as the model sees it, with its code — what was recorded stays as it was — and
// counts each refused call once.
type ticketGuard struct {
	role string // RoleWriter or RoleReview
	mu   sync.Mutex
	seen map[string]string // call id → code
}

func newTicketGuard(role string) *ticketGuard {
	return &ticketGuard{role: role, seen: map[string]string{}}
}

// count records that call id was refused with code.
func (g *ticketGuard) count(code, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen[id] = code
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
		out[c]++
	}
	return out
}

// reviewTools are the tools a review session is offered.
var reviewTools = append(slices.Clone(policy.ReadOnlyTools), contract.ReviewToolName)

// fileTools are the writer's tools that take workspace paths.
var fileTools = []string{policy.ToolRead, policy.ToolWrite, policy.ToolEdit, policy.ToolGrep, policy.ToolFind, policy.ToolLs}

// classify names the blocker of a refused call of name with the refusal text, or "".
func (g *ticketGuard) classify(name, text string) string {
	if strings.HasPrefix(text, BlockWriterUnapprovedBash) || strings.HasPrefix(text, BlockWriterPathEscape) || strings.HasPrefix(text, BlockReviewMutation) {
		code, _, _ := strings.Cut(text, ":")
		return code
	}
	switch g.role {
	case RoleReview:
		if !slices.Contains(reviewTools, name) {
			return BlockReviewMutation
		}
	case RoleWriter:
		switch {
		case name == policy.ToolBash || name == policy.ToolRunCommand:
			return BlockWriterUnapprovedBash
		case slices.Contains(fileTools, name) && escapes(text):
			return BlockWriterPathEscape
		}
	}
	return ""
}

// escapes reports whether a file tool's refusal is about a path outside the workspace: the
// file tools' wording of it, or the permission rules' refusal of rein's home directory (the
// worktree lies inside it, so a relative path climbing out of the worktree lands there).
func escapes(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "outside the workspace") || strings.Contains(t, "escapes from parent") ||
		strings.Contains(t, "protected_path") && strings.Contains(t, "home directory")
}

// Context implements kernel.ContextHook: every refused tool result gets its code in front.
func (g *ticketGuard) Context(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	out := msgs
	copied := false
	for i, m := range msgs {
		if m.Role != llm.RoleTool || !m.IsError {
			continue
		}
		text := m.Text()
		code := g.classify(m.ToolName, text)
		if code == "" {
			continue
		}
		g.count(code, m.ToolCallID)
		if strings.HasPrefix(text, code) {
			continue
		}
		if !copied {
			out, copied = slices.Clone(msgs), true
		}
		m.Content = append([]llm.Part{llm.Text(code + ": the call was blocked. ")}, m.Content...)
		out[i] = m
	}
	return out, nil
}

// refusals returns a copy of the counts, for an attempt record.
func (g *ticketGuard) refusals() map[string]int {
	c := g.counts()
	if c == nil {
		return nil
	}
	return maps.Clone(c)
}
