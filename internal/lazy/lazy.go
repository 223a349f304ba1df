// Package lazy holds values built on first use, not at package load. A package-level
// sync.OnceValue(f) is a call, so the compiler emits a package initializer for it that every
// rein process runs (and pays a page fault or two for) whether or not it ever needs the value;
// a zero Value is data the compiler lays out. Tables whose builders refer back to them
// (handlers that look up other handlers) fit too: a Value has no initializer to form a cycle.
//
//	var version lazy.Value[string]
//
//	func Version() string { return version.Get(readVersion) }
//
// Regular expressions have their own package, lazyre.
package lazy

import "sync"

// Value is a T made by the first Get's build and kept. It must not be copied after first use.
type Value[T any] struct {
	once sync.Once
	v    T
}

// Get returns the value, building it with build on the first call (every call should pass the
// same function: only the first one's runs).
func (l *Value[T]) Get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
