//go:build !linux

package proc

// Subreap does nothing outside Linux (there is no child subreaper).
func Subreap() error { return nil }

func watchOrphans() {}
