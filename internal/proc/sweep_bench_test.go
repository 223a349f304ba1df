//go:build linux

package proc

import (
	"os"
	"testing"
)

// BenchmarkSweepNothing is the sweep that ends a contained run that left nothing behind (the
// common case: after each bash call): one pass over /proc that finds no process to stop.
func BenchmarkSweepNothing(b *testing.B) {
	g := groupOf(os.Getpid())
	sel := selector{tags: tagMatch{tag: newTag(false)}, groups: map[int]group{1 << 30: g}, since: g.start}
	b.ReportAllocs()
	for b.Loop() {
		if ended := sweep(sel); len(ended) != 0 {
			b.Fatal(ended)
		}
	}
}
