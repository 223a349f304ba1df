package kernel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Config is what a run needs. Model, Tools and Recorder are required.
type Config struct {
	Model    llm.Model
	Tools    *tool.Set
	Recorder Recorder
	System   string
	// MaxTokens and Thinking are passed on to every model request.
	MaxTokens int
	Thinking  llm.ThinkingLevel
	// MaxTurns > 0 stops the run before the model call that would exceed it.
	MaxTurns int
	// MaxCost > 0 (US dollars) stops the run before the next model call once reached; it must
	// be finite and not negative ([CheckCost]).
	MaxCost float64
	// MaxUsageTokens > 0 stops the run before the next model call once the tokens used (input,
	// output and cache) reach it.
	MaxUsageTokens int
	// Deadline, when set, stops the run before the next model call once Now passes it.
	Deadline time.Time
	// SessionID is passed to providers for prompt-cache affinity.
	SessionID string
	// Compactor, if set, compacts the context before a request that would not fit, and once
	// after a provider answers that the context is too long.
	Compactor Compactor
	// Gate, if set, may refuse a validated tool call before it is announced and run.
	Gate Gate
	// ContextHooks may replace the message list of each model request, in order, just before
	// it is sent. They change what the model reads, never what is recorded.
	ContextHooks []ContextHook
	// OnToolError, if set, is told of every tool call of a turn answered with an error made
	// from an error value: a tool not offered, arguments that do not validate, the Gate's
	// refusal, an error the tool returned. err is the value itself (a *refusal.Error keeps
	// its code), so a caller classifies a refusal by its type, never by the text the model
	// reads. It is called before the result is recorded, possibly from several goroutines
	// at once (a parallel batch).
	OnToolError func(call *llm.ToolCall, err error)
	// Hooks, if set, intercepts the run at the points of package hooks (see [Hooks]).
	Hooks Hooks
	// Inbox, if set, is polled at every turn boundary for queued steering and follow-up
	// messages.
	Inbox Inbox
	// Observe receives every event; nil means nobody listens.
	Observe func(Event)
	// NewID returns a fresh unique id; nil means [NewID].
	NewID func() string
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Status says how a run ended.
type Status string

const (
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"  // the model failed or recording failed
	StatusBudget    Status = "budget"  // a budget was reached
	StatusAborted   Status = "aborted" // the context was cancelled
	// StatusBlocked: the model finished, but the Gate (or a hook) refused calls that needed an
	// approval nobody could give (see ErrNeedsApproval); or a hook ended the run (see
	// ErrHookBlocked). The work may be incomplete.
	StatusBlocked Status = "blocked"
)

// Outcome summarises a run.
type Outcome struct {
	Status Status
	Turns  int
	Usage  llm.Usage
	// Messages are the messages this run added, in context order (prompt first).
	Messages []llm.Message
	// Final is the last assistant message, if any.
	Final *llm.Message
	// Refused lists the tool calls the Gate or a before_tool hook refused, in order.
	Refused []Refusal
	// Err is nil for a completed run; otherwise it matches ErrAborted, *BudgetError,
	// *ModelError, *RecordError or (StatusBlocked) *BlockedError or *HookError.
	Err error
}

// Agent runs the loop with a fixed configuration. It is safe to call Run from one goroutine at
// a time.
type Agent struct {
	cfg       Config
	hookState agentHooks
}

// New checks cfg and returns an Agent.
func New(cfg Config) (*Agent, error) {
	switch {
	case cfg.Model == nil:
		return nil, errors.New("kernel: Config.Model is required")
	case cfg.Tools == nil:
		return nil, errors.New("kernel: Config.Tools is required (use an empty set for no tools)")
	case cfg.Recorder == nil:
		return nil, errors.New("kernel: Config.Recorder is required")
	}
	if err := cfg.checkBudgets(); err != nil {
		return nil, err
	}
	if cfg.NewID == nil {
		cfg.NewID = NewID
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Observe == nil {
		cfg.Observe = func(Event) {}
	}
	return &Agent{cfg: cfg}, nil
}

// run is the state of one Run call.
type run struct {
	*Agent
	ctx     context.Context
	context []llm.Message
	out     *Outcome
	// overflowRetried is set once a context overflow was answered by compacting.
	overflowRetried bool
	hk              runHooks
	ids             *callIDs
	// lineage names the context while it only grows: the requests built from it vouch for
	// that ([llm.Request.Lineage]). Nil until a request needs one; set to nil whenever the
	// context may have changed otherwise (see [run.grows]).
	lineage *llm.Lineage
}

// Run adds prompt to history and loops until the model stops, a budget is reached, the
// context is cancelled or something fails. history is not modified.
func (a *Agent) Run(ctx context.Context, history []llm.Message, prompt llm.Message) (*Outcome, error) {
	return a.start(ctx, history, &prompt)
}

// ErrNothingToContinue is returned by Continue when the history does not wait for the model.
var ErrNothingToContinue = errors.New("nothing to continue: the conversation does not end with a user message or tool results")

// Continue resumes a conversation that waits for the model — history ends with a user message
// or tool results (after a crash, an abort or a budget stop) — without adding a prompt.
func (a *Agent) Continue(ctx context.Context, history []llm.Message) (*Outcome, error) {
	if len(history) == 0 || history[len(history)-1].Role == llm.RoleAssistant && !history[len(history)-1].Failed() {
		return nil, ErrNothingToContinue
	}
	return a.start(ctx, history, nil)
}

func (a *Agent) start(ctx context.Context, history []llm.Message, prompt *llm.Message) (*Outcome, error) {
	r := &run{Agent: a, ctx: ctx, out: &Outcome{}, ids: newCallIDs(a.cfg.Recorder, history)}
	r.context = append([]llm.Message(nil), history...)
	err := r.loop(prompt)
	r.finish(err)
	a.cfg.Observe(Event{Type: EventAgentEnd, Outcome: r.out})
	return r.out, r.out.Err
}

func (r *run) finish(err error) {
	if err == nil {
		err = r.out.blocked()
	}
	r.out.Err = err
	var budget *BudgetError
	switch {
	case err == nil:
		r.out.Status = StatusCompleted
	case errors.Is(err, ErrNeedsApproval) || errors.Is(err, ErrHookBlocked):
		r.out.Status = StatusBlocked
	case errors.Is(err, ErrAborted):
		r.out.Status = StatusAborted
	case errors.As(err, &budget):
		r.out.Status = StatusBudget
	default:
		r.out.Status = StatusFailed
	}
}

func (r *run) loop(prompt *llm.Message) error {
	cfg := &r.cfg
	cfg.Observe(Event{Type: EventAgentStart})
	prompt, err := r.beforeAgentStart(prompt)
	if err != nil {
		return err
	}
	if prompt != nil {
		p := *prompt
		if p.Time == 0 {
			p.Time = cfg.Now().UnixMilli()
		}
		p.ID = cfg.NewID()
		if err := r.settle(Settlement{Entries: []Entry{{ID: p.ID, Message: p}}}); err != nil {
			return err
		}
		r.context = append(r.context, p)
		r.out.Messages = append(r.out.Messages, p)
		cfg.Observe(Event{Type: EventMessageStart, Message: &p})
		cfg.Observe(Event{Type: EventMessageEnd, Message: &p})
	}

	for {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("%w before turn %d: %w", ErrAborted, r.out.Turns+1, err)
		}
		if err := r.checkBudget(); err != nil {
			return err
		}
		r.out.Turns++
		turn := r.out.Turns
		cfg.Observe(Event{Type: EventTurnStart, Turn: turn})

		if cfg.Compactor != nil && cfg.Compactor.Needed(r.context) {
			// A failed compaction leaves the context as it was; the request may still fit, and
			// an overflow is handled below.
			if err := r.compact(turn, ""); err != nil && !errors.Is(err, ErrCompactionFailed) {
				return err
			}
		}
		msg, err := r.modelCall(turn)
		if err != nil {
			return err
		}
		if msg.Failed() && msg.Err != nil && msg.Err.Kind == llm.KindContext && cfg.Compactor != nil && !r.overflowRetried {
			// The provider says the context is too long: compact and retry once per run.
			r.overflowRetried = true
			if err := r.compact(turn, ""); err == nil {
				if msg, err = r.modelCall(turn); err != nil {
					return err
				}
			} else if !errors.Is(err, ErrCompactionFailed) {
				return err
			}
		}
		if msg.Failed() {
			cfg.Observe(Event{Type: EventTurnEnd, Turn: turn, Message: msg})
			if msg.StopReason == llm.StopAborted {
				return fmt.Errorf("%w during turn %d", ErrAborted, turn)
			}
			e := msg.Err
			if e == nil {
				e = &llm.Error{Kind: llm.KindProtocol, Message: "model failed without saying why"}
			}
			return &ModelError{Turn: turn, Err: e}
		}
		calls := msg.ToolCalls()
		if len(calls) == 0 {
			cfg.Observe(Event{Type: EventTurnEnd, Turn: turn, Message: msg})
			if err := r.turnEnd(turn, msg, nil); err != nil {
				return err
			}
			more, err := r.poll(turn, true)
			if err == nil && !more {
				more, err = r.stopHooks(turn, msg)
			}
			if err != nil || !more {
				return err
			}
			continue
		}
		results, err := r.toolBatch(turn, msg, calls)
		if err != nil {
			return err
		}
		cfg.Observe(Event{Type: EventTurnEnd, Turn: turn, Message: msg, Results: results})
		if err := r.turnEnd(turn, msg, results); err != nil {
			return err
		}
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("%w after the tools of turn %d", ErrAborted, turn)
		}
		if _, err := r.poll(turn, false); err != nil {
			return err
		}
	}
}

func (r *run) checkBudget() error {
	cfg := &r.cfg
	if cfg.MaxTurns > 0 && r.out.Turns >= cfg.MaxTurns {
		return &BudgetError{Budget: "turns", Limit: float64(cfg.MaxTurns), Used: float64(r.out.Turns)}
	}
	if cfg.MaxCost > 0 && r.out.Usage.Cost.Total >= cfg.MaxCost {
		return &BudgetError{Budget: "cost", Limit: cfg.MaxCost, Used: r.out.Usage.Cost.Total}
	}
	if u := r.out.Usage; cfg.MaxUsageTokens > 0 && u.Input+u.Output+u.CacheRead+u.CacheWrite >= cfg.MaxUsageTokens {
		return &BudgetError{Budget: "tokens", Limit: float64(cfg.MaxUsageTokens), Used: float64(u.Input + u.Output + u.CacheRead + u.CacheWrite)}
	}
	if !cfg.Deadline.IsZero() && !cfg.Now().Before(cfg.Deadline) {
		return &BudgetError{Budget: "elapsed", Limit: 0, Used: 0}
	}
	return nil
}

// modelCall records the intent, streams one assistant message and records its settlement.
func (r *run) modelCall(turn int) (*llm.Message, error) {
	cfg := &r.cfg
	// The request is built (context and request hooks) before the intent: a hook that fails
	// leaves no open intent behind.
	req, err := r.request(turn)
	if err != nil {
		return nil, err
	}
	msgID := cfg.NewID()
	intent := Intent{ID: cfg.NewID(), Kind: IntentModelCall, Turn: turn, Reserved: []string{msgID}}
	if err := r.intend(intent); err != nil {
		if gu, ok := errors.AsType[*GaveUpError](err); ok {
			return nil, &ModelError{Turn: turn, Err: gu.ModelError()}
		}
		return nil, err
	}
	ctx, recErr := r.attempts(intent.ID)
	started := false
	msg := cfg.Model.Stream(ctx, req, func(ev llm.Event) {
		if !started && ev.Type != llm.EventDone && ev.Type != llm.EventError {
			started = true
			cfg.Observe(Event{Type: EventMessageStart, Turn: turn, Message: &llm.Message{Role: llm.RoleAssistant}})
		}
		if ev.Type == llm.EventDone || ev.Type == llm.EventError {
			return
		}
		cfg.Observe(Event{Type: EventMessageUpdate, Turn: turn, LLM: &ev})
	})
	if *recErr != nil {
		// A retry could not be recorded, so it was not sent; the recorder's fault ends the run.
		return nil, &RecordError{Err: *recErr}
	}
	if msg == nil { // a broken adapter; the contract says this never happens
		msg = llm.Fail(&llm.Message{}, &llm.Error{Kind: llm.KindProtocol, Message: "model returned no message"})
	}
	if msg.Time == 0 {
		msg.Time = cfg.Now().UnixMilli()
	}
	if !started {
		cfg.Observe(Event{Type: EventMessageStart, Turn: turn, Message: msg})
	}
	if msg.Usage != nil {
		r.out.Usage.Add(*msg.Usage)
	}
	// Provider ids are not trusted: every call gets an id unique in the session before the
	// message is recorded, so each has exactly one result and the next request is valid.
	r.ids.assign(msg)
	if err := r.settle(Settlement{IntentID: intent.ID, Entries: []Entry{{ID: msgID, Message: *msg}}, Usage: msg.Usage}); err != nil {
		return nil, err
	}
	msg.ID = msgID
	cfg.Observe(Event{Type: EventMessageEnd, Turn: turn, Message: msg})
	r.out.Messages = append(r.out.Messages, *msg)
	r.out.Final = msg
	if !msg.Failed() {
		r.context = append(r.context, *msg)
	}
	return msg, nil
}

// attempts returns the run's context carrying the recorder's attempt numbering for the model
// call announced by intent (see [AttemptRecorder]), and where a failure to record an attempt
// is kept. Without the capability the context is the run's.
func (r *run) attempts(intent string) (context.Context, *error) {
	var recErr error
	ar := attemptRecorder(r.cfg.Recorder)
	if ar == nil {
		return r.ctx, &recErr
	}
	return llm.WithAttempts(r.ctx, func(ctx context.Context, try int) (int, int, error) {
		n, limit, err := ar.Attempt(ctx, intent, try)
		if err != nil {
			if _, gaveUp := errors.AsType[*GaveUpError](err); !gaveUp {
				recErr = err
			}
			return 0, 0, err
		}
		if try > 1 {
			r.written(Write{Kind: WriteAttempt, Intent: intent, IntentKind: IntentModelCall})
		}
		return n, limit, nil
	}), &recErr
}

func specs(s *tool.Set) []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, sp := range s.Specs() {
		out = append(out, llm.ToolSpec{Name: sp.Name, Description: sp.Description, Schema: sp.Schema})
	}
	return out
}
