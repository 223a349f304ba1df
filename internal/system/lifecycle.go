package system

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// ErrNothingPending: a run was asked to continue a session that has no pending work.
var ErrNothingPending = errors.New("nothing pending to continue")

// The session lifecycle. Every caller — print and JSON runs, RPC, compaction, delivery-run
// stage attempts — goes through the same steps:
//
//	Open      end the processes a rein that died left running, open or create the session,
//	          build the agent, recover what a crash left open (each ended process and
//	          settled action reported through Options.Notice)
//	Begin     the run's begin record (durable before anything else of the run)
//	run       Run, Continue, or the function Begin returns: the loop; when its context is
//	          cancelled, the cancel is recorded durably before the run is signalled
//	end       the run's end record with its status
//	Close     session_end hooks, then the ledger (and its writer lock) and the workspace
//
// A run without a session keeps its conversation in the Runtime, so the next run continues it.

// Open ends what a rein that died left running (see internal/proc's Reap), builds the agent o
// describes (see [Build]) and recovers its session when it existed before: the processes
// ended, a repaired torn tail and every settled intent are reported through o.Notice.
func Open(ctx context.Context, o Options) (*Runtime, error) {
	reapLeftovers(o.Home, noticeOr(o.Notice))
	rt, err := Build(o)
	if err != nil {
		return nil, err
	}
	if err := rt.recover(ctx); err != nil {
		rt.Close()
		return nil, err
	}
	return rt, nil
}

// recover settles what an interrupted earlier process left open in a resumed session.
func (rt *Runtime) recover(ctx context.Context) error {
	s := rt.Session
	if s == nil || !rt.Resumed {
		return nil
	}
	if rt.Opened != nil {
		for _, w := range rt.Opened.Warnings {
			rt.notice(fmt.Sprintf("session %s: %s", s.ID(), w))
		}
	}
	acts, err := s.Recover(ctx, rt.Agent)
	if err != nil {
		return fmt.Errorf("recovering session %s: %w", s.ID(), err)
	}
	for _, a := range acts {
		rt.notice(fmt.Sprintf("session %s was interrupted; recovered: %s", s.ID(), a))
	}
	return nil
}

// Begin opens one run of the session for prompt (nil: continue the pending work) and returns
// the function that runs it and ends it with its status. Nothing of the run happens before
// Begin returns; an error means no run was opened. Continuing a session whose pending model
// call gave up (see session.Session.GaveUp) is refused with that call's *llm.Error.
//
// A prompt starting with "/NAME" that names a skill the user may invoke is sent as that
// skill's instructions, and the skill is active for the run (see skillcall.go).
func (rt *Runtime) Begin(prompt *llm.Message) (func(context.Context) (*kernel.Outcome, error), error) {
	var skill *skillRun
	if prompt != nil {
		p, run, err := rt.invoke(*prompt)
		if err != nil {
			return nil, err
		}
		prompt, skill = &p, run
	}
	s := rt.Session
	if prompt == nil && s != nil {
		// A model call that used its recorded attempts stays given up: continuing reports it
		// (the provider's error, exit 3) and sends nothing.
		if gu, ok := errors.AsType[*kernel.GaveUpError](s.GaveUp()); ok {
			return nil, fmt.Errorf("session %s: %w", s.ID(), gu.ModelError())
		}
		if !s.Pending() {
			return nil, fmt.Errorf("%w: session %s has nothing pending; give a prompt", ErrNothingPending, s.ID())
		}
	}
	if s != nil {
		if err := s.BeginRun(); err != nil {
			return nil, err
		}
	}
	return func(ctx context.Context) (*kernel.Outcome, error) {
		rt.active.set(skill)
		defer rt.active.set(nil)
		return rt.execute(ctx, prompt)
	}, nil
}

// execute runs a begun run and ends it.
func (rt *Runtime) execute(ctx context.Context, prompt *llm.Message) (*kernel.Outcome, error) {
	s := rt.Session
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() {
		if s != nil {
			// Durable before the signal; a caller that recorded its own reason first leaves
			// nothing open to record here.
			if err := s.Cancel("interrupted"); err != nil {
				rt.notice(fmt.Sprintf("recording the interrupt: %v", err))
			}
		}
		cancel(context.Cause(ctx))
	})
	defer stop()
	if ctx.Err() != nil {
		// Cancelled before the run started: nothing is open to record, and the run must not
		// race the signal.
		cancel(context.Cause(ctx))
	}
	history := rt.Context()
	var out *kernel.Outcome
	var err error
	if prompt == nil {
		out, err = rt.Agent.Continue(runCtx, history)
	} else {
		out, err = rt.Agent.Run(runCtx, history, *prompt)
	}
	status := string(kernel.StatusFailed)
	if out != nil {
		status = string(out.Status)
	}
	if s == nil {
		if out != nil {
			rt.mu.Lock()
			rt.history = append(rt.history, out.Messages...)
			rt.usage.Add(out.Usage)
			rt.mu.Unlock()
		}
		return out, err
	}
	if endErr := s.EndRun(status); endErr != nil && err == nil {
		err = endErr
	}
	if g := rt.guard; g != nil {
		// A ledger removed or replaced during the run recorded nothing anyone will read:
		// the run failed, whatever it did.
		if gerr := g.anchor(s); gerr != nil {
			if errors.Is(gerr, ErrSessionGone) && out != nil {
				out.Status = kernel.StatusFailed
			}
			err = errors.Join(gerr, err)
		}
	}
	return out, err
}

// Run runs prompt as one run of the session.
func (rt *Runtime) Run(ctx context.Context, prompt llm.Message) (*kernel.Outcome, error) {
	run, err := rt.Begin(&prompt)
	if err != nil {
		return nil, err
	}
	return run(ctx)
}

// Continue finishes the session's pending work (a tool result the model has not seen) as one
// run; ErrNothingPending when there is none.
func (rt *Runtime) Continue(ctx context.Context) (*kernel.Outcome, error) {
	run, err := rt.Begin(nil)
	if err != nil {
		return nil, err
	}
	return run(ctx)
}

// Context is the conversation the next run continues: the session's lane, or the runs of
// this Runtime when it has no session.
func (rt *Runtime) Context() []llm.Message {
	if rt.Session != nil {
		return rt.Session.Context()
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]llm.Message(nil), rt.history...)
}

// Usage is what the conversation has cost so far.
func (rt *Runtime) Usage() llm.Usage {
	if rt.Session != nil {
		return rt.Session.Usage()
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.usage
}

// Compact summarizes the older part of the conversation (recorded in the session, or
// replacing the in-memory conversation) and returns it before and after.
func (rt *Runtime) Compact(ctx context.Context, instructions string) (before, after []llm.Message, err error) {
	before = rt.Context()
	after, err = rt.Agent.Compact(ctx, before, instructions)
	if err == nil && rt.Session == nil {
		rt.mu.Lock()
		rt.history = after
		rt.mu.Unlock()
	}
	return before, after, err
}

// Cancel records durably that the run in progress is being cancelled, before the caller
// signals it; without a session there is nothing to record.
func (rt *Runtime) Cancel(reason string) error {
	if rt.Session == nil {
		return nil
	}
	return rt.Session.Cancel(reason)
}

// Head is the session ledger's last sequence number and hash (zero without a session).
func (rt *Runtime) Head() (int64, string) {
	if rt.Session == nil {
		return 0, ""
	}
	return rt.Session.Head()
}

// Close ends the agent (its session_end hooks run) and releases the session (its ledger and
// writer lock), the workspace and the bash tool's spill directory of a run without a session.
func (rt *Runtime) Close() error {
	if rt.Agent != nil {
		_ = rt.Agent.End(context.Background(), hooks.EndExit) // failures are reported as they happen
	}
	return rt.release()
}

func (rt *Runtime) release() error {
	var errs []error
	if rt.MCP != nil {
		errs = append(errs, rt.MCP.Close())
	}
	if rt.Session != nil {
		err := rt.Session.Close()
		errs = append(errs, err)
		if rt.guard != nil && err == nil && !rt.discarded {
			errs = append(errs, rt.guard.anchor(rt.Session))
		}
	}
	if rt.Workspace != nil {
		errs = append(errs, rt.Workspace.Close())
	}
	if rt.spill != "" {
		errs = append(errs, os.RemoveAll(rt.spill))
	}
	if rt.journal != nil {
		errs = append(errs, rt.journal.Close())
	}
	_ = rt.predial.Close() // an unused connection; its failure concerns nobody
	return errors.Join(errs...)
}

// discard releases a Runtime whose Build failed, removing a session that Build created.
func (rt *Runtime) discard() {
	rt.discarded = true
	_ = rt.release()
	if rt.created && rt.Session != nil {
		_ = os.RemoveAll(rt.Session.Dir())
		if rt.guard != nil {
			rt.guard.forget()
		}
	}
}
