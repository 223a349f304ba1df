package command

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/llm"
)

// asyncQueue holds the commands running in the background — async hooks, and hooks whose
// first line of stdout was the async answer — and what they said once they ended, until it
// reaches the model: appended to the next tool result or prompt (recorded with it), as
// Claude Code delivers async output on the next turn. Decisions of such commands (exit
// status 2 except with asyncRewake, decision, permissionDecision, continue) have no effect.
type asyncQueue struct {
	mu      sync.Mutex
	pending []string
	cancels map[*running]context.CancelFunc
}

// add watches run, a background command of hook h for event.
func (q *asyncQueue) add(r *Runner, h Hook, event string, run *running, cancel context.CancelFunc) {
	q.mu.Lock()
	if q.cancels == nil {
		q.cancels = map[*running]context.CancelFunc{}
	}
	q.cancels[run] = cancel
	q.mu.Unlock()
	go func() {
		<-run.done
		cancel()
		text := r.asyncText(h, event, run)
		q.mu.Lock()
		defer q.mu.Unlock()
		delete(q.cancels, run)
		if text != "" {
			q.pending = append(q.pending, text)
		}
	}()
}

// asyncText is what a background command that ended gives the model; failures are notices.
func (r *Runner) asyncText(h Hook, event string, run *running) string {
	if run.err != nil {
		var re *RunError
		if !errors.As(run.err, &re) || re.Kind != "cancelled" {
			r.notice("async %s hook %s failed (ignored): %v", event, h.Name(), run.err)
		}
		return ""
	}
	res := run.res
	// The in-band async answer is the first line; what follows is the hook's output.
	if first, rest, ok := bytes.Cut(res.stdout, []byte("\n")); ok && asyncMarker(first) {
		res.stdout = rest
	} else if !ok && asyncMarker(first) {
		res.stdout = nil
	}
	if res.code == 2 {
		if h.AsyncRewake {
			return strings.TrimSpace(string(res.stderr))
		}
		return ""
	}
	a, err := r.answer(h, event, res)
	if err != nil {
		r.notice("async %s hook %s failed (ignored): %v", event, h.Name(), err)
		return ""
	}
	var parts []string
	if a.out != nil && a.out.SystemMessage != "" {
		parts = append(parts, a.out.SystemMessage)
	}
	if c := a.context(); c != "" {
		parts = append(parts, c)
	}
	return strings.Join(parts, "\n")
}

// take removes and returns what is pending.
func (q *asyncQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending = nil
	return out
}

func (q *asyncQueue) hasPending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) > 0
}

// stopAll cancels the commands still running (the session ends; Claude Code kills them at
// teardown too).
func (q *asyncQueue) stopAll() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range q.cancels {
		c()
	}
}

func (q *asyncQueue) running() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.cancels) > 0
}

// asyncHookName is the registry name of the hooks delivering async output.
const asyncHookName = "async-hook-output"

// registerAsync adds the registry hooks that deliver async output: on each tool result and
// prompt, offered only while output is pending (so nothing is recorded otherwise), and at
// session end one that ends the commands still running.
func (r *Runner) registerAsync(reg *hooks.Registry) {
	note := func() string {
		return "\n\nAsync hook output:\n" + strings.Join(r.async.take(), "\n")
	}
	pending := hooks.Match(func(hooks.Event) bool { return r.async.hasPending() })
	hooks.On(reg, asyncHookName, func(_ context.Context, ev *hooks.AfterTool) error {
		res := *ev.Result
		res.Content = append(append([]llm.Part(nil), res.Content...), llm.Text(note()))
		ev.Result = &res
		return nil
	}, pending)
	hooks.On(reg, asyncHookName, func(_ context.Context, ev *hooks.BeforeAgentStart) error {
		p := *ev.Prompt
		p.Content = append(append([]llm.Part(nil), p.Content...), llm.Text(note()))
		ev.Prompt = &p
		return nil
	}, hooks.Match(func(ev hooks.Event) bool { return ev.(*hooks.BeforeAgentStart).Prompt != nil && r.async.hasPending() }))
	hooks.On(reg, asyncHookName, func(context.Context, *hooks.SessionEnd) error {
		r.async.stopAll()
		return nil
	}, hooks.Match(func(hooks.Event) bool { return r.async.running() }))
}
