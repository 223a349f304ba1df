package grep

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// globFilter is a parsed glob (see the package documentation).
type globFilter struct {
	pattern  string
	negate   bool // a leading "!": exclude what matches
	dirOnly  bool // a trailing "/": match directories only
	anchored bool // contains "/": match the workspace-relative path, else the name
}

// parseGlob parses g; an empty g gives nil, which selects every file.
func parseGlob(g string) (*globFilter, error) {
	if g == "" {
		return nil, nil
	}
	f := &globFilter{}
	p := g
	if rest, ok := strings.CutPrefix(p, "!"); ok {
		f.negate, p = true, rest
	}
	if rest, ok := strings.CutSuffix(p, "/"); ok {
		f.dirOnly, p = true, rest
	}
	if strings.Contains(p, "/") {
		f.anchored = true
		p = strings.TrimPrefix(p, "/")
	}
	if p == "" || !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("invalid glob %q: use a pattern such as \"*.go\", \"*.{ts,tsx}\" or \"src/**/*.ts\"", g)
	}
	f.pattern = p
	return f, nil
}

func (f *globFilter) matches(p string) bool {
	if !f.anchored {
		p = path.Base(p)
	}
	ok, _ := doublestar.Match(f.pattern, p)
	return ok
}

// selects reports whether the file at the workspace-relative path p passes the filter.
func (f *globFilter) selects(p string) bool {
	if f == nil {
		return true
	}
	if !f.negate {
		return !f.dirOnly && f.matches(p)
	}
	if !f.dirOnly && f.matches(p) {
		return false
	}
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if f.matches(dir) {
			return false
		}
	}
	return true
}

// nameOnly reports whether the filter tests file names alone with syntax that ripgrep's
// globs read the same way, so that ripgrep can apply it as a file type.
func (f *globFilter) nameOnly() bool {
	return f != nil && !f.anchored && !f.dirOnly && !strings.ContainsAny(f.pattern, `[\:`)
}
