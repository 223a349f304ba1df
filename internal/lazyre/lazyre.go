// Package lazyre holds regular expressions compiled on first use, not at package load. A
// pattern with bounded repeats ({0,63}) costs hundreds of allocations to compile, and every
// rein process would pay for every package's patterns at start-up although most never use
// them (cmd/rein's TestPackageInitIsCheap holds the line).
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled the first time it is used.
type Regexp func() *regexp.Regexp

// New returns expr compiled on first use; a bad expr panics then, as regexp.MustCompile would
// at load.
func New(expr string) Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// MatchString is [regexp.Regexp.MatchString].
func (r Regexp) MatchString(s string) bool { return r().MatchString(s) }

// FindStringSubmatch is [regexp.Regexp.FindStringSubmatch].
func (r Regexp) FindStringSubmatch(s string) []string { return r().FindStringSubmatch(s) }

// ReplaceAllString is [regexp.Regexp.ReplaceAllString].
func (r Regexp) ReplaceAllString(src, repl string) string { return r().ReplaceAllString(src, repl) }
