package grep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp/syntax"
	"strings"
)

// Backend finds matching lines. Implementations must report matches in search order: files
// ordered by path components compared bytewise, lines in ascending order within a file.
type Backend interface {
	// Name identifies the backend ("rg", "native").
	Name() string
	// Search calls found for every matching line of the files q selects, until found returns
	// false (Search then stops promptly and returns nil) or the search ends. Unreadable files
	// are skipped.
	Search(ctx context.Context, q Query, found func(Match) bool) error
}

// Query is one search.
type Query struct {
	// Dir is the absolute workspace directory and Root the workspace opened as an [os.Root].
	Dir  string
	Root *os.Root
	// Path is the file or directory to search, relative to Dir, slash-separated, cleaned and
	// free of symbolic links ("." for the workspace).
	Path string
	// Pattern is a regular expression, or a literal string when Literal is set.
	Pattern    string
	Literal    bool
	IgnoreCase bool
	// Glob, when not empty, is the file filter described in the package documentation. A
	// backend may use it to skip files early; the tool applies it to every match anyway.
	Glob string
	// Skip, when set, names files the search must leave out (the workspace's Guard refuses
	// to read them): a backend that opens files itself calls it before opening one. The
	// tool drops every match in a skipped file anyway, before it reads a line of it.
	Skip func(path string) bool
}

// Match is one matching line.
type Match struct {
	// Path is relative to the workspace, slash-separated.
	Path string
	// Line is 1-based.
	Line int
}

// ErrPattern is wrapped by errors about the search pattern.
var ErrPattern = errors.New("invalid pattern")

// checkPattern rejects patterns that can only match across lines, which both backends refuse.
func checkPattern(q Query) error {
	if q.Literal {
		if strings.ContainsAny(q.Pattern, "\n") {
			return fmt.Errorf("%w: the literal pattern contains a line break; grep matches one line at a time, search for one line", ErrPattern)
		}
		return nil
	}
	re, err := syntax.Parse(q.Pattern, syntax.Perl)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPattern, err)
	}
	if hasNewlineLiteral(re) {
		return fmt.Errorf("%w: the pattern contains a line break (\\n); grep matches one line at a time, search for one line", ErrPattern)
	}
	return nil
}

func hasNewlineLiteral(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if hasNewlineLiteral(sub) {
			return true
		}
	}
	return false
}

// comparePaths orders slash-separated paths component by component, bytewise, which is the
// order of a sorted directory walk.
func comparePaths(a, b string) int {
	for {
		ac, arest, amore := strings.Cut(a, "/")
		bc, brest, bmore := strings.Cut(b, "/")
		if c := strings.Compare(ac, bc); c != 0 {
			return c
		}
		switch {
		case !amore && !bmore:
			return 0
		case !amore:
			return -1
		case !bmore:
			return 1
		}
		a, b = arest, brest
	}
}
