package run

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on first use, not at package load: the
// profile's name patterns ({0,63} repeats) cost 1,500 allocations to compile, in every rein
// process, although most never read a profile.
type lazyRegexp func() *regexp.Regexp

// newLazyRegexp returns expr compiled on first use; a bad expr panics then, as
// regexp.MustCompile would at load.
func newLazyRegexp(expr string) lazyRegexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// MatchString is [regexp.Regexp.MatchString].
func (l lazyRegexp) MatchString(s string) bool { return l().MatchString(s) }

// FindStringSubmatch is [regexp.Regexp.FindStringSubmatch].
func (l lazyRegexp) FindStringSubmatch(s string) []string { return l().FindStringSubmatch(s) }
