package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// What rein's own package initializers may allocate at start-up, per package and all
// together. Building one JSON schema by reflection or compiling one regexp with a {0,63}
// repeat costs tens of KB and hundreds of allocations; such work belongs behind
// sync.OnceValue (built on first use), not in a package-level var.
const (
	initPackageBytes  = 8 << 10
	initPackageAllocs = 100
	initTotalBytes    = 32 << 10
	initTotalAllocs   = 400
)

// TestPackageInitIsCheap runs this test binary again (it links every package rein links)
// with GODEBUG=inittrace=1 and no tests, and checks that no package of this module does
// expensive work at load: nothing is timed, the runtime counts the bytes and allocations of
// each package's initializers.
func TestPackageInitIsCheap(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("re-running the test binary: %v\n%s", err, stderr.String())
	}
	inits, err := parseInitTrace(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	var bytes, allocs int
	for _, in := range inits {
		if !strings.HasPrefix(in.pkg, "github.com/reinhq/rein/") {
			continue
		}
		bytes, allocs = bytes+in.bytes, allocs+in.allocs
		if in.bytes > initPackageBytes || in.allocs > initPackageAllocs {
			t.Errorf("%s allocates %d bytes in %d allocations at load (at most %d and %d): build it on first use (sync.OnceValue)",
				in.pkg, in.bytes, in.allocs, initPackageBytes, initPackageAllocs)
		}
	}
	if bytes == 0 {
		t.Fatalf("no initializer of github.com/reinhq/rein/... in the trace:\n%s", stderr.String())
	}
	if bytes > initTotalBytes || allocs > initTotalAllocs {
		t.Errorf("rein's packages allocate %d bytes in %d allocations at load, at most %d and %d",
			bytes, allocs, initTotalBytes, initTotalAllocs)
	}
	t.Logf("rein's package initializers: %d bytes, %d allocations", bytes, allocs)
}

type initCost struct {
	pkg           string
	bytes, allocs int
}

// parseInitTrace returns the init lines of an inittrace output (other lines are skipped).
func parseInitTrace(out string) ([]initCost, error) {
	// Compiled here, not in a package-level var: this file's package is measured too.
	initLine := regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	var inits []initCost
	for line := range strings.Lines(out) {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			if strings.HasPrefix(line, "init ") {
				return nil, fmt.Errorf("unrecognised inittrace line %q", line)
			}
			continue
		}
		b, err1 := strconv.Atoi(m[2])
		a, err2 := strconv.Atoi(m[3])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("inittrace line %q: bad numbers", line)
		}
		inits = append(inits, initCost{pkg: m[1], bytes: b, allocs: a})
	}
	return inits, nil
}
