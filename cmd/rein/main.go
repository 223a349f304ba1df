// Command rein is an agent harness: see the README.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/reinhq/rein/internal/cli"
	"github.com/reinhq/rein/internal/proc"
)

func main() { os.Exit(run()) }

func run() int {
	presizeStack(false)
	// REIN_CPUPROFILE=FILE writes a CPU profile of the whole process (for `go tool pprof`);
	// a development aid, see the README's Benchmarks section.
	if path := os.Getenv("REIN_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if err := pprof.StartCPUProfile(f); err == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		} else {
			fmt.Fprintln(os.Stderr, "rein: REIN_CPUPROFILE:", err)
		}
	}
	// rein adopts what its tools' processes leave behind, so that it can end it (every child
	// of this process is started by internal/proc, which Subreap requires).
	if err := proc.Subreap(); err != nil {
		fmt.Fprintln(os.Stderr, "rein: warning:", err)
	}
	ctx, stop, installed := interruptContext(context.Background())
	defer stop()
	if runtime.GOMAXPROCS(0) == 1 {
		// One P: the installing goroutine would run only once main blocks (at the first
		// fsync, with the session already made); wait for it here instead.
		<-installed
	}
	return cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
