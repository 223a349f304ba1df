package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/llm"
)

// Hooks intercepts a run at the points of package hooks (Config.Hooks); *hooks.Registry
// implements it. Run returns nil, a *hooks.StopError (a hook asked to stop the run) or a
// *hooks.Error (a hook set to fail closed failed).
type Hooks interface {
	Run(ctx context.Context, ev hooks.Event) error
}

// ErrHookBlocked marks a run a hook ended: it refused the prompt, asked to stop the run, or
// failed while set to fail closed at a point that guards the whole run. Such a run ends with
// [StatusBlocked] and a *[HookError].
var ErrHookBlocked = errors.New("blocked by a hook")

// HookError says a hook ended the run at Point. It matches [ErrHookBlocked] and Err: a
// *hooks.StopError, a *hooks.Error, or the error a before_agent_start hook blocked with.
type HookError struct {
	Point hooks.Point
	Err   error
}

func (e *HookError) Error() string { return fmt.Sprintf("blocked by a %s hook: %v", e.Point, e.Err) }

// Unwrap returns ErrHookBlocked and the hook's error.
func (e *HookError) Unwrap() []error { return []error{ErrHookBlocked, e.Err} }

// ErrCompactionCancelled says a before_compact hook cancelled a compaction (or failed while
// set to fail closed). It matches [ErrCompactionFailed]: the context is unchanged.
var ErrCompactionCancelled error = cancelledCompaction{}

// cancelledCompaction is ErrCompactionCancelled: a value the compiler lays out, where
// fmt.Errorf at package level would be a package initializer every start runs.
type cancelledCompaction struct{}

func (cancelledCompaction) Error() string {
	return ErrCompactionFailed.Error() + ": cancelled by a hook"
}
func (cancelledCompaction) Unwrap() error { return ErrCompactionFailed }

// Cutter is an optional capability of a [Compactor]: the index of the first message it would
// keep verbatim when compacting msgs. The kernel asks it when a before_compact hook supplies a
// summary without saying where the kept messages begin.
type Cutter interface {
	Cut(msgs []llm.Message) int
}

// agentHooks is the agent's share of hook state: session_start runs once per agent, and its
// system prompt and error hold for every run.
type agentHooks struct {
	mu      sync.Mutex
	started bool
	ended   bool
	system  string
	err     error
}

// runHooks is one run's share of hook state.
type runHooks struct {
	// system is the run's system prompt, after session_start and before_agent_start.
	system string
	// continued: a stop hook made this run go on already.
	continued bool
	// mu serializes after_tool hooks and guards stop.
	mu sync.Mutex
	// stop is a hook's request to stop, made during a tool batch; the run ends after it.
	stop error
}

// hook runs the hooks of ev's point; an error is a *HookError.
func (r *run) hook(ev hooks.Event) error {
	if r.cfg.Hooks == nil {
		return nil
	}
	if err := r.cfg.Hooks.Run(r.ctx, ev); err != nil {
		return &HookError{Point: ev.Point(), Err: err}
	}
	return nil
}

// sessionStart runs session_start, once per agent, and returns the agent's system prompt.
func (a *Agent) sessionStart(ctx context.Context) (string, error) {
	h := &a.hookState
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started {
		h.started, h.system = true, a.cfg.System
		if a.cfg.Hooks != nil {
			ev := &hooks.SessionStart{SessionID: a.cfg.SessionID, System: a.cfg.System}
			if err := a.cfg.Hooks.Run(ctx, ev); err != nil {
				h.err = &HookError{Point: hooks.PointSessionStart, Err: err}
			}
			h.system = ev.System
		}
	}
	return h.system, h.err
}

// End runs the session_end hooks, once, if the agent ever started (a run or a compaction).
// Call it when the process is done with the agent's session; reason is hooks.EndExit or
// another word the hooks understand. Hooks see ctx, which should not be the cancelled context
// of an interrupted run.
func (a *Agent) End(ctx context.Context, reason string) error {
	h := &a.hookState
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started || h.ended || a.cfg.Hooks == nil {
		return nil
	}
	h.ended = true
	if err := a.cfg.Hooks.Run(ctx, &hooks.SessionEnd{SessionID: a.cfg.SessionID, Reason: reason}); err != nil {
		return &HookError{Point: hooks.PointSessionEnd, Err: err}
	}
	return nil
}

// beforeAgentStart runs session_start (once per agent) and before_agent_start, sets the run's
// system prompt, and returns the prompt to record (nil when the run continues pending work).
func (r *run) beforeAgentStart(prompt *llm.Message) (*llm.Message, error) {
	system, err := r.Agent.sessionStart(r.ctx)
	r.hk.system = system
	if err != nil || r.cfg.Hooks == nil {
		return prompt, err
	}
	ev := &hooks.BeforeAgentStart{SessionID: r.cfg.SessionID, System: system}
	if prompt != nil {
		p := *prompt
		ev.Prompt = &p
	}
	if err := r.hook(ev); err != nil {
		return nil, err
	}
	if ev.Block != nil {
		return nil, &HookError{Point: hooks.PointBeforeAgentStart, Err: ev.Block}
	}
	r.hk.system = ev.System
	if prompt == nil || ev.Prompt == nil {
		return prompt, nil
	}
	if ev.Prompt.Role != llm.RoleUser {
		return nil, &HookError{Point: hooks.PointBeforeAgentStart,
			Err: fmt.Errorf("a hook replaced the prompt with a %q message; a prompt is a user message", ev.Prompt.Role)}
	}
	return ev.Prompt, nil
}

// request builds the model request of a turn: the context through Config.ContextHooks and the
// context hooks, then the before_provider_request hooks. Nothing is recorded yet. The request
// carries the run's lineage when its messages are the context and the context only grew since
// the lineage's previous request ([run.grows]).
func (r *run) request(turn int) (*llm.Request, error) {
	cfg := &r.cfg
	msgs := r.context
	grows := r.grows()
	if !grows {
		r.lineage = nil // the hooks below may edit the context: later requests start anew
	} else if r.lineage == nil {
		r.lineage = llm.NewLineage()
	}
	for _, h := range cfg.ContextHooks {
		var err error
		if msgs, err = h.Context(r.ctx, msgs); err != nil {
			return nil, fmt.Errorf("context hook: %w", err)
		}
	}
	if cfg.Hooks != nil {
		ev := &hooks.Context{Turn: turn, Messages: msgs}
		if err := r.hook(ev); err != nil {
			return nil, err
		}
		msgs = ev.Messages
	}
	req := &llm.Request{
		System:    r.hk.system,
		Messages:  msgs,
		Tools:     specs(cfg.Tools),
		MaxTokens: cfg.MaxTokens,
		Thinking:  cfg.Thinking,
		SessionID: cfg.SessionID,
	}
	if grows {
		req.Lineage = r.lineage
	}
	if cfg.Hooks != nil {
		ev := &hooks.BeforeProviderRequest{Turn: turn, Request: req}
		if err := r.hook(ev); err != nil {
			return nil, err
		}
		if ev.Request != nil {
			req = ev.Request
		}
	}
	return req, nil
}

// messagePoints are the hook points whose payloads hold messages of the context (or the
// request built from it) between one request and the next.
var messagePoints = []hooks.Point{hooks.PointContext, hooks.PointBeforeProviderRequest, hooks.PointTurnEnd}

// grows reports whether the context, as the next request sends it, can only have grown since
// the previous request: no Config.ContextHooks, and no hook at a point whose payload holds the
// context's messages (hooks must not edit them in place, but nothing checks a hook). Hooks
// that cannot say which points they serve (no Has method, as *hooks.Registry has) count as
// hooks at every point. Compaction and stop hooks end the lineage where they run.
func (r *run) grows() bool {
	if len(r.cfg.ContextHooks) > 0 {
		return false
	}
	if r.cfg.Hooks == nil {
		return true
	}
	h, ok := r.cfg.Hooks.(interface{ Has(hooks.Point) bool })
	if !ok {
		return false
	}
	for _, p := range messagePoints {
		if h.Has(p) {
			return false
		}
	}
	return true
}

// beforeTool runs the before_tool hooks on a call the gate allowed. It returns the call's
// error result when a hook blocked it, failed closed, or rewrote its arguments into ones that
// do not validate or that the gate refuses; nil lets the call run with p.args (and p.call)
// as the hooks left them.
func (r *run) beforeTool(turn int, p *pending) *llm.Message {
	if r.cfg.Hooks == nil {
		return nil
	}
	refuse := func(err error) *llm.Message {
		r.out.Refused = append(r.out.Refused, Refusal{Turn: turn, Call: p.call, Err: err})
		return errorResult(p.call, err.Error())
	}
	ev := &hooks.BeforeTool{Turn: turn, Call: p.call, Spec: p.tool.Spec(), Args: p.args}
	if err := r.hook(ev); err != nil {
		r.requestStop(err)
		return refuse(err)
	}
	if ev.Block != nil {
		return refuse(ev.Block)
	}
	if bytes.Equal(ev.Args, p.args) {
		return nil
	}
	args, err := validateCall(p.tool, string(ev.Args))
	if err != nil {
		return errorResult(p.call, "A before_tool hook rewrote the arguments of this call into invalid ones; the tool did not run.\n"+err.Error())
	}
	c := *p.call
	c.Arguments = string(args)
	p.call, p.args = &c, args
	// The rewritten call is what runs and what its intent records: the gate judges it again.
	if err := r.check(turn, p); err != nil {
		return errorResult(p.call, err.Error())
	}
	return nil
}

// afterTool runs the after_tool hooks on a result, one call at a time, and returns the result
// to record.
func (r *run) afterTool(turn int, p *pending, res *llm.Message) *llm.Message {
	if r.cfg.Hooks == nil {
		return res
	}
	r.hk.mu.Lock()
	defer r.hk.mu.Unlock()
	ev := &hooks.AfterTool{Turn: turn, Call: p.call, Args: p.args, Result: res}
	if err := r.hook(ev); err != nil {
		if _, ok := errors.AsType[*hooks.StopError](err); !ok {
			return errorResult(p.call, "The result of this call was withheld: "+err.Error())
		}
		r.stopLocked(err)
	}
	if ev.Result == nil || ev.Result == res {
		return res
	}
	out := *ev.Result
	out.Role, out.ToolCallID, out.ToolName = llm.RoleTool, p.call.ID, p.call.Name
	return &out
}

// requestStop remembers the first request to stop made during a tool batch (a *HookError
// holding a *hooks.StopError); other errors are ignored.
func (r *run) requestStop(err error) {
	r.hk.mu.Lock()
	defer r.hk.mu.Unlock()
	r.stopLocked(err)
}

func (r *run) stopLocked(err error) {
	if _, ok := errors.AsType[*hooks.StopError](err); ok && r.hk.stop == nil {
		r.hk.stop = err
	}
}

// turnEnd ends the run when a hook asked to stop during the turn's tool batch, and otherwise
// runs the turn_end hooks.
func (r *run) turnEnd(turn int, msg *llm.Message, results []llm.Message) error {
	r.hk.mu.Lock()
	stop := r.hk.stop
	r.hk.mu.Unlock()
	if stop != nil {
		return stop
	}
	return r.hook(&hooks.TurnEnd{Turn: turn, Message: msg, Results: results})
}

// stopHooks runs the stop hooks when the run would complete and reports whether a hook made it
// go on (its message is then recorded as a user message).
func (r *run) stopHooks(turn int, msg *llm.Message) (bool, error) {
	if r.cfg.Hooks == nil {
		return false, nil
	}
	r.lineage = nil // the hooks see the last message of the context
	ev := &hooks.Stop{Turn: turn, Message: msg, Active: r.hk.continued}
	if err := r.hook(ev); err != nil || ev.Continue == "" {
		return false, err
	}
	r.hk.continued = true
	return true, r.deliver(turn, []llm.Message{llm.UserText(ev.Continue)})
}

// beforeCompact runs the before_compact hooks. It returns the payload when a hook supplied the
// summary (FirstKept resolved), nil when the compactor is to summarize, or an error: one
// matching ErrCompactionCancelled, or a *HookError when a hook asked to stop the run.
func (r *run) beforeCompact(turn int, instructions string) (*hooks.BeforeCompact, error) {
	if r.cfg.Hooks == nil {
		return nil, nil
	}
	ev := &hooks.BeforeCompact{Turn: turn, Manual: turn == 0, Instructions: instructions, Messages: r.context}
	if err := r.hook(ev); err != nil {
		if _, ok := errors.AsType[*hooks.StopError](err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrCompactionCancelled, err)
	}
	switch {
	case ev.Cancel != nil:
		return nil, fmt.Errorf("%w: %w", ErrCompactionCancelled, ev.Cancel)
	case ev.Summary == nil:
		return nil, nil
	}
	if ev.FirstKept == 0 {
		if c, ok := r.cfg.Compactor.(Cutter); ok {
			ev.FirstKept = c.Cut(r.context)
		}
	}
	s := *ev.Summary
	s.Role = llm.RoleUser
	ev.Summary = &s
	return ev, nil
}
