package lazy

import (
	"sync"
	"testing"
)

func TestBuiltOnceOnFirstGet(t *testing.T) {
	var v Value[[]int]
	builds := 0
	build := func() []int { builds++; return []int{1, 2} }
	if builds != 0 {
		t.Fatal("built before the first Get")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = v.Get(build) }()
	}
	wg.Wait()
	if got := v.Get(build); builds != 1 || len(got) != 2 {
		t.Fatalf("built %d times, value %v", builds, got)
	}
}
