package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Process is a long-lived process started by [Start] (a server rein speaks to over its
// standard input and output). It is the same run as [Run] makes — its own process group,
// the parent-death signal, the run's tag, the Journal and Spec.Contain — held by a goroutine
// that waits for it, locked to the thread that started it until the process is reaped.
type Process struct {
	// Stdin is the write end of the process's standard input; closing it is how a server
	// is asked to exit ([Process.Stop] does that first).
	Stdin io.WriteCloser
	// Stdout is the read end of the process's standard output. It reaches EOF once the
	// process and everything Contain ends holding the pipe are gone, and only after Done is
	// closed.
	Stdout io.ReadCloser
	// Pid is the process id (and its group's id).
	Pid int

	cancel context.CancelFunc
	done   chan struct{}
	res    Result
}

// Start starts the process s describes and returns once it runs, or with an error naming
// why it could not start. s.Stdin and s.Stdout must be nil: Start makes the pipes (plain
// files, so that no copying goroutine can hold the run open after the process is gone).
// s.Timeout bounds the whole life of the process; cancelling ctx kills its group, as for Run.
func Start(ctx context.Context, s Spec) (*Process, error) {
	if s.Stdin != nil || s.Stdout != nil {
		return nil, errors.New("proc: Start makes the standard input and output pipes itself; leave Spec.Stdin and Spec.Stdout nil")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("proc: making the input pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("proc: making the output pipe: %w", err)
	}
	s.Stdin, s.Stdout = inR, outW
	runCtx, cancel := context.WithCancel(ctx)
	p := &Process{Stdin: inW, Stdout: outR, cancel: cancel, done: make(chan struct{})}
	started := make(chan int, 1)
	go func() {
		p.res = run(runCtx, s, func(pid int) { started <- pid })
		cancel()
		close(p.done)
		// The child's copies are its own; rein's ends of the pipes it was given go now, so
		// that the reader sees EOF and a writer EPIPE — after Done, so that whoever reads
		// EOF finds the Result ready.
		inR.Close()
		outW.Close()
	}()
	select {
	case p.Pid = <-started:
		return p, nil
	case <-p.done:
		inW.Close()
		outR.Close()
		if p.res.Err != nil {
			return nil, fmt.Errorf("starting %s: %w", s.Path, p.res.Err)
		}
		return nil, fmt.Errorf("starting %s: %s", s.Path, p.res)
	}
}

// Done is closed once the process has ended and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Result is how the process ended; it is valid once Done is closed.
func (p *Process) Result() Result {
	<-p.done
	return p.res
}

// Stop ends the process: it closes its standard input, waits up to grace for it to exit on
// its own, then kills its group (SIGKILL; no SIGTERM, which could reach a reused pid once the
// process is reaped). It returns how the process ended and may be called more than once.
func (p *Process) Stop(grace time.Duration) Result {
	_ = p.Stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.cancel()
		<-p.done
	}
	_ = p.Stdout.Close()
	return p.res
}
