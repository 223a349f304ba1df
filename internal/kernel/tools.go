package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// TruncatedCallText is the result every call of a length-truncated message gets.
const TruncatedCallText = "Tool call %q was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."

// MaxArgumentBytes caps a tool call's arguments: a larger call is answered with an error result
// and never run (the run goes on). Below it, arguments of any size are recorded (as a blob
// when large, see package session). 16 MiB is far above any argument a model writes (a whole
// source file is kilobytes) and small enough to validate in memory.
const MaxArgumentBytes = 16 << 20

// validateCall is tool.ValidateCall behind the size cap.
func validateCall(t tool.Tool, args string) (json.RawMessage, error) {
	if len(args) > MaxArgumentBytes {
		return nil, fmt.Errorf("%s: arguments too large: %d bytes, limit %d; the call was not executed (pass large content in smaller pieces)",
			t.Spec().Name, len(args), MaxArgumentBytes)
	}
	return tool.ValidateCall(t, args)
}

// pending is one call of a batch on its way to a result.
type pending struct {
	index  int
	call   *llm.ToolCall
	tool   tool.Tool
	args   json.RawMessage
	result *llm.Message // set once the call has its result
	intent Intent
}

// toolBatch gives every call of msg exactly one result, in source order.
func (r *run) toolBatch(turn int, msg *llm.Message, calls []*llm.ToolCall) ([]llm.Message, error) {
	cfg := &r.cfg
	batch := make([]*pending, len(calls))
	var immediate []Entry // results decided without running anything
	for i, c := range calls {
		p := &pending{index: i, call: c}
		batch[i] = p
		cfg.Observe(Event{Type: EventToolStart, Turn: turn, Call: c})
		switch {
		case msg.StopReason == llm.StopLength:
			p.result = errorResult(c, fmt.Sprintf(TruncatedCallText, c.Name))
		default:
			t, ok := cfg.Tools.Get(c.Name)
			if !ok {
				p.result = r.failed(c, fmt.Errorf("Tool %q not found. Available tools: %s.", c.Name, strings.Join(cfg.Tools.Names(), ", ")))
				break
			}
			p.tool = t
			args, err := validateCall(t, c.Arguments)
			if err != nil {
				if o, ok := t.(tool.RefusalObserver); ok {
					o.ArgsRefused(c.Arguments)
				}
				p.result = r.failed(c, err)
				break
			}
			p.args = args
			if err := r.check(turn, p); err != nil {
				p.result = r.failed(c, err)
			} else {
				p.result = r.beforeTool(turn, p)
			}
		}
		if p.result != nil {
			p.result.ID = cfg.NewID()
			immediate = append(immediate, Entry{ID: p.result.ID, Message: *p.result})
			cfg.Observe(Event{Type: EventToolEnd, Turn: turn, Call: c, Message: p.result})
		}
	}
	if len(immediate) > 0 {
		if err := r.settle(Settlement{Entries: immediate}); err != nil {
			return nil, err
		}
	}

	var runnable []*pending
	sequential := false
	for _, p := range batch {
		if p.result == nil {
			runnable = append(runnable, p)
			sequential = sequential || p.tool.Spec().Sequential
		}
	}
	// Intents in source order, each durable before its tool can start (a local call's rides on the
	// next fsync: see Recorder).
	if err := r.execute(turn, runnable, sequential); err != nil {
		return nil, err
	}

	results := make([]llm.Message, len(batch))
	for i, p := range batch {
		results[i] = *p.result
		cfg.Observe(Event{Type: EventMessageStart, Turn: turn, Message: p.result})
		cfg.Observe(Event{Type: EventMessageEnd, Turn: turn, Message: p.result})
	}
	r.context = append(r.context, results...)
	r.out.Messages = append(r.out.Messages, results...)
	return results, nil
}

// execute runs the prepared calls, recording an intent before and a settlement after each. A
// sequential batch records, runs and settles one call at a time; a parallel batch records every
// intent (in source order) before starting any call, so the record order does not depend on
// scheduling.
func (r *run) execute(turn int, calls []*pending, sequential bool) error {
	cfg := &r.cfg
	var (
		mu       sync.Mutex // serializes observers and settlements across goroutines
		firstErr error
		wg       sync.WaitGroup
	)
	record := func(p *pending, res *llm.Message, s Settlement) {
		mu.Lock()
		defer mu.Unlock()
		p.result = res
		if firstErr == nil {
			firstErr = r.settle(s)
		}
		cfg.Observe(Event{Type: EventToolEnd, Turn: turn, Call: p.call, Message: res})
	}
	finish := func(p *pending, res *llm.Message) {
		res = r.afterTool(turn, p, res)
		res.ID = p.intent.Reserved[0]
		record(p, res, Settlement{IntentID: p.intent.ID, Entries: []Entry{{ID: res.ID, Message: *res}}})
	}
	// notStarted gives a call that will not run its result, recorded without an intent.
	notStarted := func(p *pending) {
		res := errorResult(p.call, "Tool call was not executed: the run was aborted.")
		res.ID = cfg.NewID()
		record(p, res, Settlement{Entries: []Entry{{ID: res.ID, Message: *res}}})
	}
	intend := func(p *pending) error {
		spec := p.tool.Spec() // built by each call of Spec: read once
		replay := spec.Replay
		if replay == "" {
			replay = tool.ReplayNever
		}
		p.intent = Intent{ID: cfg.NewID(), Kind: IntentToolCall, Turn: turn, Reserved: []string{cfg.NewID()},
			Call: p.call, Index: p.index, Replay: replay, Local: spec.Local && replay == tool.ReplaySafe}
		return r.intend(p.intent)
	}

	if sequential {
		for _, p := range calls {
			if r.ctx.Err() != nil {
				notStarted(p)
				continue
			}
			if err := intend(p); err != nil {
				return err
			}
			finish(p, r.invoke(turn, p, &mu))
		}
		return firstErr
	}
	if r.ctx.Err() != nil {
		for _, p := range calls {
			notStarted(p)
		}
		return firstErr
	}
	for _, p := range calls {
		if err := intend(p); err != nil {
			return err
		}
	}
	for _, p := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			finish(p, r.invoke(turn, p, &mu))
		}()
	}
	wg.Wait()
	return firstErr
}

// invoke runs one tool and turns whatever happens into a result message.
func (r *run) invoke(turn int, p *pending, mu *sync.Mutex) (res *llm.Message) {
	defer func() {
		if v := recover(); v != nil {
			res = errorResult(p.call, fmt.Sprintf("Tool %q crashed: %v. This is a bug in rein; the stack was:\n%s", p.call.Name, v, debug.Stack()))
		}
	}()
	call := tool.Call{ID: p.call.ID, Args: p.args, Update: func(partial tool.Result) {
		m := resultMessage(p.call, partial)
		mu.Lock()
		defer mu.Unlock()
		r.cfg.Observe(Event{Type: EventToolUpdate, Turn: turn, Call: p.call, Message: m})
	}}
	out, err := p.tool.Run(r.ctx, call)
	if err != nil {
		if r.cfg.OnToolError != nil {
			r.cfg.OnToolError(p.call, err)
		}
		msg := err.Error()
		if r.ctx.Err() != nil && context.Cause(r.ctx) != nil {
			msg += " (the run was aborted)"
		}
		m := errorResult(p.call, msg)
		if out.Details != nil {
			m.Details = marshalDetails(out.Details)
		}
		return m
	}
	return resultMessage(p.call, out)
}

func resultMessage(c *llm.ToolCall, r tool.Result) *llm.Message {
	m := &llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: r.Content, IsError: r.IsError}
	if len(m.Content) == 0 {
		m.Content = []llm.Part{llm.Text("(no output)")}
	}
	if r.Details != nil {
		m.Details = marshalDetails(r.Details)
	}
	return m
}

func marshalDetails(d any) json.RawMessage {
	if raw, ok := d.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(d)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"detailsError": err.Error()})
	}
	return b
}

// failed is the error result of call c, answered without running it because of err, which
// Config.OnToolError sees.
func (r *run) failed(c *llm.ToolCall, err error) *llm.Message {
	if r.cfg.OnToolError != nil {
		r.cfg.OnToolError(c, err)
	}
	return errorResult(c, err.Error())
}

func errorResult(c *llm.ToolCall, text string) *llm.Message {
	m := llm.ToolResultText(c, text, true)
	return &m
}

func (r *run) intend(in Intent) error {
	if err := r.cfg.Recorder.Intend(r.ctx, in); err != nil {
		return &RecordError{Err: err}
	}
	r.written(Write{Kind: WriteIntent, Intent: in.ID, IntentKind: in.Kind})
	return nil
}

func (r *run) settle(s Settlement) error {
	now := r.cfg.Now().UnixMilli()
	for i := range s.Entries {
		if s.Entries[i].Message.Time == 0 {
			s.Entries[i].Message.Time = now
		}
	}
	// A cancelled run still records what already happened.
	if err := r.cfg.Recorder.Settle(context.WithoutCancel(r.ctx), s); err != nil {
		return &RecordError{Err: err}
	}
	w := Write{Kind: WriteSettlement, Intent: s.IntentID}
	for _, e := range s.Entries {
		w.Entries = append(w.Entries, e.ID)
	}
	r.written(w)
	return nil
}

// ReplaySafe reports whether the named tool is declared replay-safe now (for crash recovery).
func (a *Agent) ReplaySafe(name string) bool {
	t, ok := a.cfg.Tools.Get(name)
	return ok && t.Spec().Replay == tool.ReplaySafe
}

// Replay runs one tool call outside a turn, for crash recovery: the arguments are validated and
// the Gate consulted as in a turn, and every failure is an error result. Hooks do not run: the
// call passed before_tool before it was interrupted, and its intent holds the arguments the
// hooks left.
func (a *Agent) Replay(ctx context.Context, call *llm.ToolCall) llm.Message {
	t, ok := a.cfg.Tools.Get(call.Name)
	if !ok {
		return *errorResult(call, fmt.Sprintf("Tool %q not found.", call.Name))
	}
	args, err := validateCall(t, call.Arguments)
	if err != nil {
		return *errorResult(call, err.Error())
	}
	r := &run{Agent: a, ctx: ctx, out: &Outcome{}}
	p := &pending{call: call, tool: t, args: args}
	if err := r.check(0, p); err != nil {
		return *errorResult(call, err.Error())
	}
	var mu sync.Mutex
	return *r.invoke(0, p, &mu)
}
