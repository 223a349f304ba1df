package hooks

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// Outcome says what one hook run decided.
type Outcome string

const (
	OutcomeOK      Outcome = "ok"      // ran and changed nothing
	OutcomeChanged Outcome = "changed" // rewrote the payload (arguments, result, prompt, summary…)
	OutcomeBlocked Outcome = "blocked" // blocked, refused, cancelled, or (stop) continued the run
	OutcomeStopped Outcome = "stopped" // returned Stop: the run is to stop
	OutcomeFailed  Outcome = "failed"  // returned an error or panicked
)

// Run describes one hook run, for [Options.Report].
type Run struct {
	// Hook is the name the hook was registered under.
	Hook  string
	Point Point
	// Outcome is what it decided; FailClosed is its fail mode.
	Outcome    Outcome
	FailClosed bool
	Duration   time.Duration
	// Err is the hook's error (Outcome failed or stopped). Its text may quote what the hook
	// saw or printed: show it to the user, do not record it.
	Err error
	// Detail names the failure without any payload (safe to record): "panic", "error", or
	// what an error with a HookDetail() string method says.
	Detail string
}

// Options configure a [Registry].
type Options struct {
	// Report, if set, receives every hook run, from the goroutine that ran it.
	Report func(Run)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Option configures one hook.
type Option func(*entry)

// FailClosed makes a failing hook refuse what its point guards instead of being ignored (see
// the package documentation).
func FailClosed() Option { return func(e *entry) { e.failClosed = true } }

// Match makes the hook run only for payloads match accepts (a command hook's matcher); a
// payload it refuses is not offered to the hook, and nothing is reported.
func Match(match func(Event) bool) Option { return func(e *entry) { e.match = match } }

// StopError asks the kernel to stop the run; return it from a hook with [StopRun].
type StopError struct {
	Reason string
}

func (e *StopError) Error() string {
	if e.Reason == "" {
		return "a hook stopped the run"
	}
	return "a hook stopped the run: " + e.Reason
}

// StopRun returns a *StopError: the hook's changes to the payload are kept, the chain ends, and the
// kernel stops the run (blocked) once it has recorded what already happened.
func StopRun(reason string) error { return &StopError{Reason: reason} }

// Error is a fail-closed hook's failure, as [Registry.Run] returns it.
type Error struct {
	Hook  string
	Point Point
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("%s hook %s failed: %v", e.Point, e.Hook, e.Err) }

// Unwrap returns the hook's error.
func (e *Error) Unwrap() error { return e.Err }

type entry struct {
	name       string
	failClosed bool
	match      func(Event) bool
	// call runs the hook on ev and returns a copy of ev as it was before. A panic becomes an
	// error; on an error other than a *StopError ev is restored to that copy.
	call func(ctx context.Context, ev Event) (before Event, err error)
}

// Registry holds hooks by point and runs them. The zero value is not usable; call [New].
type Registry struct {
	opts  Options
	mu    sync.RWMutex
	hooks map[Point][]*entry
}

// New returns an empty registry.
func New(opts Options) *Registry {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Registry{opts: opts, hooks: map[Point][]*entry{}}
}

// On registers fn under name for the point of its payload type E, after the hooks already
// there:
//
//	hooks.On(reg, "guard", func(ctx context.Context, ev *hooks.BeforeTool) error { … })
func On[E any, PE interface {
	*E
	Event
}](r *Registry, name string, fn func(context.Context, PE) error, opts ...Option) {
	e := &entry{name: name, call: func(ctx context.Context, ev Event) (before Event, err error) {
		p := ev.(PE)
		// A shallow copy suffices: hooks assign new values, they do not modify in place.
		saved := *p
		defer func() {
			if v := recover(); v != nil {
				err = &panicError{value: v, stack: debug.Stack()}
			}
			if stop := (*StopError)(nil); err != nil && !errors.As(err, &stop) {
				*p = saved
			}
		}()
		return PE(&saved), fn(ctx, p)
	}}
	for _, o := range opts {
		o(e)
	}
	var zero E
	p := PE(&zero).Point()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks[p] = append(r.hooks[p], e)
}

// ContextHook registers h (for instance a kernel.ContextHook) as a context hook.
func (r *Registry) ContextHook(name string, h ContextHook, opts ...Option) {
	On(r, name, func(ctx context.Context, ev *Context) error {
		msgs, err := h.Context(ctx, ev.Messages)
		if err == nil {
			ev.Messages = msgs
		}
		return err
	}, opts...)
}

// Has reports whether any hook is registered for p.
func (r *Registry) Has(p Point) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.hooks[p]) > 0
}

// Run runs the hooks of ev's point on ev, in registration order, until one decides (see the
// package documentation). It returns nil, a *[StopError] from a hook that asked to stop the
// run, or an *[Error] from a fail-closed hook that failed.
func (r *Registry) Run(ctx context.Context, ev Event) error {
	r.mu.RLock()
	list := r.hooks[ev.Point()]
	r.mu.RUnlock()
	for _, e := range list {
		if e.match != nil && !e.match(ev) {
			continue
		}
		start := r.opts.Now()
		before, err := e.call(ctx, ev)
		run := Run{Hook: e.name, Point: ev.Point(), FailClosed: e.failClosed, Err: err}
		var stop *StopError
		switch {
		case err == nil:
			run.Outcome = ev.outcome(before)
		case errors.As(err, &stop):
			run.Outcome = OutcomeStopped
		default:
			run.Outcome, run.Detail = OutcomeFailed, detail(err)
		}
		run.Duration = r.opts.Now().Sub(start)
		if r.opts.Report != nil {
			r.opts.Report(run)
		}
		switch {
		case stop != nil:
			return stop
		case err != nil && e.failClosed:
			return &Error{Hook: e.name, Point: ev.Point(), Err: err}
		case err == nil && run.Outcome == OutcomeBlocked:
			return nil
		case err == nil && run.Outcome == OutcomeChanged && decided(ev):
			return nil
		}
	}
	return nil
}

// decided reports whether a change is a decision that ends the chain (a supplied summary).
func decided(ev Event) bool {
	c, ok := ev.(*BeforeCompact)
	return ok && c.Summary != nil
}

// panicError is a recovered panic.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string      { return fmt.Sprintf("panic: %v\n%s", e.value, e.stack) }
func (e *panicError) HookDetail() string { return "panic" }

// detail returns the recordable name of a failure.
func detail(err error) string {
	var d interface{ HookDetail() string }
	if errors.As(err, &d) {
		return d.HookDetail()
	}
	return "error"
}
