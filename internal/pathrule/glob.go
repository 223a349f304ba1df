package pathrule

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Glob is a compiled path glob. The zero value matches nothing useful; build one with
// [Compile].
type Glob struct {
	raw     string // as written
	pattern string // cleaned doublestar pattern
	abs     bool   // the pattern is absolute
}

// Compile cleans a path glob: "./" and a trailing "/" are dropped, "~/" is expanded to the
// home directory; an absolute pattern matches absolute paths. A pattern containing ".." or
// not valid for doublestar is an error.
func Compile(raw string) (Glob, error) {
	p := raw
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return Glob{}, fmt.Errorf("cannot expand ~: %w", err)
		}
		p = filepath.ToSlash(home) + strings.TrimPrefix(p, "~")
	}
	abs := strings.HasPrefix(p, "/")
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(strings.TrimPrefix(p, "./"), "/")
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	if p == "" {
		p = "."
	}
	if strings.Contains("/"+p+"/", "/../") {
		return Glob{}, fmt.Errorf("a path pattern must not contain \"..\"")
	}
	if !doublestar.ValidatePattern(p) {
		return Glob{}, fmt.Errorf("%q is not a valid glob", p)
	}
	return Glob{raw: raw, pattern: p, abs: abs}, nil
}

// String returns the glob as written.
func (g Glob) String() string { return g.raw }

// Pattern returns the cleaned pattern that is matched.
func (g Glob) Pattern() string { return g.pattern }

// Abs reports whether the glob matches absolute paths (else workspace-relative ones).
func (g Glob) Abs() bool { return g.abs }

// Match matches the glob against a path resolved by [Resolve]: an absolute glob against abs,
// a relative one against rel; an empty path never matches. The glob matches a path or one of
// its parent directories, so a glob for a directory covers what is inside it. fold compares
// case-insensitively.
func (g Glob) Match(rel, abs string, fold bool) bool {
	if g.abs {
		return abs != "" && globMatch(g.pattern, abs, fold)
	}
	return rel != "" && globMatch(g.pattern, rel, fold)
}

// globMatch reports whether glob matches p or one of p's parent directories, so a rule for a
// directory covers what is inside it. fold compares case-insensitively.
func globMatch(glob, p string, fold bool) bool {
	if fold {
		glob, p = strings.ToLower(glob), strings.ToLower(p)
	}
	for {
		if doublestar.MatchUnvalidated(glob, p) {
			return true
		}
		parent := path.Dir(p)
		if parent == p || parent == "." || parent == "/" {
			return false
		}
		p = parent
	}
}

// EscapeGlob quotes the glob metacharacters of a literal path (\ * ? [ ] { }), so it can
// be listed among protected globs.
func EscapeGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		switch c {
		case '\\', '*', '?', '[', ']', '{', '}':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
