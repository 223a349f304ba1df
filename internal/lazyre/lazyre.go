// Package lazyre holds regular expressions compiled on first use, not at package load. A
// pattern with bounded repeats ({0,63}) costs hundreds of allocations to compile, and every
// rein process would pay for every package's patterns at start-up although most never use
// them (cmd/rein's TestPackageInitIsCheap holds the line).
//
// A Regexp is declared as a composite literal, lazyre.Regexp{Expr: `…`}: the compiler lays it
// out as data, where a call at package level (regexp.MustCompile, sync.OnceValue) would be a
// package initializer that every start runs, and pays a page fault or two for.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is the regular expression Expr, compiled the first time it is used; a bad Expr
// panics then, as regexp.MustCompile would at load. It must not be copied after first use.
type Regexp struct {
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Compiled returns the compiled expression.
func (r *Regexp) Compiled() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Expr) })
	return r.re
}

// MatchString is [regexp.Regexp.MatchString].
func (r *Regexp) MatchString(s string) bool { return r.Compiled().MatchString(s) }

// FindStringSubmatch is [regexp.Regexp.FindStringSubmatch].
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Compiled().FindStringSubmatch(s) }

// ReplaceAllString is [regexp.Regexp.ReplaceAllString].
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Compiled().ReplaceAllString(src, repl)
}
