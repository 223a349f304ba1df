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
	initPackageBytes  = 4 << 10
	initPackageAllocs = 100
	initTotalBytes    = 16 << 10
	initTotalAllocs   = 400
)

// What every linked package's initializers may allocate at start-up, per package and all
// together (the Go runtime's and standard library's included): Go runs them on every start,
// `rein -p` and `rein --version` too. Measured at 745–761 KB in about 5,000 allocations all together
// (this test binary, linux/amd64, Go 1.26), the largest openai-go's root package with 145 KB
// in 1,083 allocations. glamour's markdown stack, which the terminal UI linked until issue
// 19, allocated 5.7 MB in 60,000 allocations at load (chroma's lexers 2.29 MB, its styles
// 1.61 MB and 34,053 allocations, bluemonday 771 KB) and would fail every bound here.
const (
	linkedPackageBytes  = 256 << 10
	linkedPackageAllocs = 2000
	linkedTotalBytes    = 1 << 20
	linkedTotalAllocs   = 8000
)

// TestPackageInitIsCheap runs this test binary again (it links every package rein links)
// with GODEBUG=inittrace=1 and no tests, and checks that no package of this module does
// expensive work at load: nothing is timed, the runtime counts the bytes and allocations of
// each package's initializers.
func TestPackageInitIsCheap(t *testing.T) {
	inits := traceInits(t)
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
		t.Fatalf("no initializer of github.com/reinhq/rein/... in the trace: %v", inits)
	}
	if bytes > initTotalBytes || allocs > initTotalAllocs {
		t.Errorf("rein's packages allocate %d bytes in %d allocations at load, at most %d and %d",
			bytes, allocs, initTotalBytes, initTotalAllocs)
	}
	t.Logf("rein's package initializers: %d bytes, %d allocations", bytes, allocs)
}

// TestLinkedPackagesInitIsCheap bounds the initializers of every linked package, the
// dependencies' too, so that a heavy dependency (one that parses tables or compiles
// hundreds of regexps at load) cannot come in unseen.
func TestLinkedPackagesInitIsCheap(t *testing.T) {
	inits := traceInits(t)
	var bytes, allocs int
	for _, in := range inits {
		bytes, allocs = bytes+in.bytes, allocs+in.allocs
		if in.bytes > linkedPackageBytes || in.allocs > linkedPackageAllocs {
			t.Errorf("%s allocates %d bytes in %d allocations at load (at most %d and %d): every start pays for it; does rein need this dependency?",
				in.pkg, in.bytes, in.allocs, linkedPackageBytes, linkedPackageAllocs)
		}
	}
	if bytes > linkedTotalBytes || allocs > linkedTotalAllocs {
		t.Errorf("the linked packages allocate %d bytes in %d allocations at load, at most %d and %d",
			bytes, allocs, linkedTotalBytes, linkedTotalAllocs)
	}
	t.Logf("%d linked packages' initializers: %d bytes, %d allocations", len(inits), bytes, allocs)
}

// traceInits re-runs this test binary with GODEBUG=inittrace=1 and no tests and returns the
// cost of each package's initializers.
func traceInits(t *testing.T) []initCost {
	t.Helper()
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
	if len(inits) == 0 {
		t.Fatalf("no init lines in the trace:\n%s", stderr.String())
	}
	return inits
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
