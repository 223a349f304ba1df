package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/tool"
)

// Role is who a session works for. Delivery runs give each role a fixed tool surface.
type Role string

const (
	// RoleDefault is a person's own session: every tool.
	RoleDefault Role = "default"
	// RoleWorkflow plans and coordinates: read-only tools and the contract tools.
	RoleWorkflow Role = "workflow"
	// RoleWriter changes code in its worktree: file tools and approved commands, no bash.
	RoleWriter Role = "writer"
	// RoleReview reviews: read, grep, find, ls (and the contract tools to submit a review).
	RoleReview Role = "review"
)

// Roles lists every role.
var Roles = []Role{RoleDefault, RoleWorkflow, RoleWriter, RoleReview}

// ToolRunCommand is the name of the writer's tool that runs an approved command by id.
const ToolRunCommand = "run_command"

// ReadOnlyTools are the tools that never change anything.
var ReadOnlyTools = []string{ToolRead, ToolGrep, ToolFind, ToolLs}

// Surface is the set of tools a role may see and use.
type Surface struct {
	Role Role
	// Tools lists the tool names the role may use, in a fixed order; nil means every tool.
	Tools []string
}

// SurfaceFor returns the tool surface of role. contract names the contract tools of the
// run (submitting a plan, a candidate, a review); they are added to every role but default,
// which sees everything anyway. An unknown role is an *[refusal.Error] with [CodeUnknownRole].
func SurfaceFor(role Role, contract ...string) (Surface, error) {
	var names []string
	switch role {
	case RoleDefault:
		return Surface{Role: role}, nil
	case RoleWorkflow, RoleReview:
		names = slices.Clone(ReadOnlyTools)
	case RoleWriter:
		names = append(slices.Clone(ReadOnlyTools), ToolWrite, ToolEdit, ToolRunCommand)
	default:
		return Surface{}, errorf(CodeUnknownRole, "unknown role %q; use one of %s", role, roleList())
	}
	for _, c := range contract {
		if c == ToolBash && role != RoleDefault {
			return Surface{}, errorf(CodeUnknownRole, "bash cannot be a contract tool of the %s role", role)
		}
		if !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	return Surface{Role: role, Tools: names}, nil
}

func roleList() string {
	s := make([]string, len(Roles))
	for i, r := range Roles {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

// Allows reports whether the role may use the tool.
func (s Surface) Allows(name string) bool {
	return s.Tools == nil || slices.Contains(s.Tools, name)
}

// Filter returns the tools of set the role may use, in set's order, so a role never sees a
// tool it cannot use. Tools of the surface that set lacks are simply absent.
func (s Surface) Filter(set *tool.Set) (*tool.Set, error) {
	if s.Tools == nil {
		return set, nil
	}
	var keep []string
	for _, n := range set.Names() {
		if s.Allows(n) {
			keep = append(keep, n)
		}
	}
	return set.Select(keep)
}

// Check refuses a call to a tool outside the surface: a reviewer's attempt at any such tool
// is a mutation attempt ([CodeReviewMutation]), other roles get [CodeToolNotInRole]. The
// caller logs the refusal with its code.
func (s Surface) Check(name string) error {
	if s.Allows(name) {
		return nil
	}
	if s.Role == RoleReview {
		return errorf(CodeReviewMutation, "the review role may not use %s: reviewers only read (%s); report what should change in your review instead of changing it", name, strings.Join(s.Tools, ", "))
	}
	return errorf(CodeToolNotInRole, "the %s role may not use %s; use one of: %s", s.Role, name, strings.Join(s.Tools, ", "))
}

// String describes the surface.
func (s Surface) String() string {
	if s.Tools == nil {
		return fmt.Sprintf("%s: every tool", s.Role)
	}
	return fmt.Sprintf("%s: %s", s.Role, strings.Join(s.Tools, ", "))
}
