package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interruptContext is signal.NotifyContext(ctx, SIGINT, SIGTERM) with the handler installed by
// a goroutine: the first signal.Notify of a process waits for the runtime's signal-mask thread
// to be made and to answer (a round trip to a new, locked thread, ~0.2–0.3 ms that the main
// goroutine would wait at every start). The goroutine runs at once on another P; until it has
// installed the handler (well under a millisecond, long before a session is created) a signal
// has its default effect: the process ends, as it does when the signal comes during the
// runtime's own start. With a single P, main waits for installed before going on; installed
// is closed once the handler is in place. The context's cause names the signal, as
// NotifyContext's does; stop, as NotifyContext's, restores the default behaviour and cancels
// the context.
func interruptContext(parent context.Context) (ctx context.Context, stop func(), installed <-chan struct{}) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	var mu sync.Mutex
	stopped := false
	go func() {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		mu.Unlock()
		close(done)
		select {
		case s := <-ch:
			cancel(errors.New(s.String() + " signal received")) // NotifyContext's cause
		case <-ctx.Done():
		}
	}()
	stop = func() {
		mu.Lock()
		stopped = true
		signal.Stop(ch)
		mu.Unlock()
		cancel(nil)
	}
	return ctx, stop, done
}
