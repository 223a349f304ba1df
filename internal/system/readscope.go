package system

import (
	"fmt"
	"path"
	"strings"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// CodeReadOutOfScope: a read tool reached a path outside the agent's read scope.
const CodeReadOutOfScope refusal.Code = "read_out_of_scope"

// scopeGuard holds the read tools to an agent's [agentspec.ReadScope] before the permission
// rules (next) judge a path. It sees every path the file tools and grep open or list, by its
// real path (see tool.Guard), so the scope holds through symbolic links and inside directory
// searches.
type scopeGuard struct {
	name string
	only map[string]bool // nil: no allowlist
	list string          // the allowlist, for the refusal
	deny []string        // lower case
	next tool.Guard
}

// newScopeGuard returns next bounded by s (next itself when s bounds nothing). A path of s
// that is not a clean workspace-relative path is a configuration error.
func newScopeGuard(s agentspec.ReadScope, next tool.Guard) (tool.Guard, error) {
	if s.IsZero() {
		return next, nil
	}
	g := &scopeGuard{name: s.Name, next: next}
	if g.name == "" {
		g.name = "this agent's read scope"
	}
	if s.Only != nil {
		g.only = make(map[string]bool, len(s.Only))
		for _, p := range s.Only {
			if err := scopePath(p); err != nil {
				return nil, err
			}
			g.only[p] = true
		}
		g.list = strings.Join(s.Only, ", ")
		if g.list == "" {
			g.list = "none"
		}
	}
	for _, p := range s.Deny {
		if err := scopePath(p); err != nil {
			return nil, err
		}
		g.deny = append(g.deny, strings.ToLower(p))
	}
	return g, nil
}

func scopePath(p string) error {
	if p == "" || p == "." || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, `\`) {
		return fmt.Errorf("%w: read scope path %q is not a clean path relative to the workspace", ErrConfig, p)
	}
	return nil
}

// Read implements tool.Guard.
func (g *scopeGuard) Read(rel string, named bool, links uint64) error {
	if g.only != nil && !g.only[rel] {
		return refusal.Errorf(CodeReadOutOfScope, "%s is outside %s: only these files can be read: %s; everything else you need is in the request", rel, g.name, g.list)
	}
	low := strings.ToLower(rel)
	for _, d := range g.deny {
		if low == d || strings.HasPrefix(low, d+"/") {
			return refusal.Errorf(CodeReadOutOfScope, "%s is inside %s, which is outside %s: it may not be read; what you need of it is in the request", rel, d, g.name)
		}
	}
	if links > 1 {
		return refusal.Errorf(pathrule.CodeHardLinked, "%s has %d hard links: its other names are unknown and may lie outside %s, so it is not read", rel, links, g.name)
	}
	if g.next == nil {
		return nil
	}
	return g.next.Read(rel, named, links)
}

// Write implements tool.Guard: the scope bounds reads only; the permission rules judge writes.
func (g *scopeGuard) Write(rel string, named bool) error {
	if g.next == nil {
		return nil
	}
	return g.next.Write(rel, named)
}
