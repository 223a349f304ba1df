package tui

import (
	"context"
	"time"
)

// Library is what the session and configuration commands read: /resume (the sessions),
// /tree (a session's entries), /export, /permissions, /hooks and /skill:name. A [Host] may
// implement it (package cli does, over package system); without it those commands say they
// are not available.
type Library interface {
	// Sessions lists the workspace's sessions, newest first.
	Sessions(ctx context.Context) ([]SessionSummary, error)
	// Tree lists the user and assistant entries of the session in sessionDir, in record
	// order, each with its parent.
	Tree(ctx context.Context, sessionID, sessionDir string) ([]TreeEntry, error)
	// Export writes the session as markdown (secrets redacted) to path ("" picks one in the
	// workspace) and returns the path written and what was redacted ("" for nothing).
	Export(ctx context.Context, sessionID, sessionDir, path string) (written, redacted string, err error)
	// Permissions and Hooks describe the settings in force, one line each, with the file
	// they come from.
	Permissions(trusted bool) ([]string, error)
	Hooks(trusted bool) ([]string, error)
	// Skill returns the full text of the named skill the system prompt lists.
	Skill(name string) (string, error)
	// Skills names the skills the system prompt lists (for completion).
	Skills() []string
}

// SessionSummary is one session as the picker previews it.
type SessionSummary struct {
	ID, Dir string
	// Name is the session's name ("" for none); FirstPrompt its first user message.
	Name, FirstPrompt string
	Updated           time.Time
	Entries           int
	CostUSD           float64
	// Err says the session could not be read ("" when it could).
	Err string
}

// TreeEntry is one user or assistant entry of a session.
type TreeEntry struct {
	ID, Parent string
	Role       string
	Text       string
	// Tools names the tool calls of an assistant entry.
	Tools []string
	// OnPath says the entry is on the conversation the session continues.
	OnPath bool
	Time   time.Time
}

// library is the host's Library, or nil.
func (e *engine) library() Library {
	l, _ := e.host.(Library)
	return l
}

// RuleWriter is what "always allow" needs; a [Host] may implement it (package cli does,
// over the settings files). Without it the approval offers no "always".
type RuleWriter interface {
	// AllowRule is the narrowest permission rule that names the call (as written to
	// settings: "bash(go test ./...)", "write(notes.txt)").
	AllowRule(a Approval) string
	// AllowAlways adds rule to the allow list of the project's .rein/settings.json
	// (project) or the user's $REIN_HOME/settings.json, keeping the rest of the file, and
	// returns the file's path.
	AllowAlways(rule string, project bool) (path string, err error)
	// AlwaysAllowed reports whether a settings file in force (the project's only when
	// trusted) lists rule, exactly as written, among its allow rules.
	AlwaysAllowed(rule string, trusted bool) bool
}

// rules is the host's RuleWriter, or nil.
func (e *engine) rules() RuleWriter {
	r, _ := e.host.(RuleWriter)
	return r
}
