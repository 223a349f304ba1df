package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// Subject describes the agent an Instrument traces. Every field is configuration, never
// content.
type Subject struct {
	// SessionID is the session's id ("" without a session).
	SessionID string
	Provider  string
	Model     string
	// MaxTokens is the output limit requests ask for when they set none.
	MaxTokens int
	// Tools are the names of the tools the agent offers; a call to any other name (a model can
	// invent one) is exported as "other".
	Tools []string
	// BaseURL is the provider endpoint requests go to ("" for the provider's default); only
	// its host and port are exported, as server.address and server.port.
	BaseURL string
}

// Instrument traces one agent: its event stream ([Instrument.Observe]), its model
// ([Instrument.Model]) and its recorder ([Instrument.Recorder]). A nil *Instrument passes
// everything through untouched. Spans are parented explicitly from what the instrument saw,
// never through an ambient context: the kernel runs one Run at a time per agent and calls
// observers, the model and the recorder in the order its documentation guarantees.
type Instrument struct {
	t      *Tracer
	sub    Subject
	tools  map[string]bool
	server []attr // server.address and server.port of the provider, if known

	mu       sync.Mutex
	run      *span
	turn     *span
	attempts map[string]int     // step kind -> intents of that kind in this turn
	toolN    int                // tool_start events in this turn
	steps    map[string]*step   // open steps by intent id
	calls    map[string][]*call // open tool spans by call id, in start order
	model    *span              // the open step a model request belongs to
	seq      int64              // the last ledger seq a write reported
}

type step struct {
	kind       string
	span       *span
	checkpoint *span // the compaction checkpoint around a compaction step
	call       *call // the tool span around a tool_call step
}

type call struct {
	span *span
	ran  bool // an intent was recorded: the tool ran
}

// Instrument returns the instrumentation of one agent; nil when t is nil (tracing off).
func (t *Tracer) Instrument(sub Subject) *Instrument {
	if t == nil {
		return nil
	}
	in := &Instrument{t: t, sub: sub, tools: map[string]bool{}, server: server(sub.Provider, sub.BaseURL)}
	for _, n := range sub.Tools {
		in.tools[n] = true
	}
	in.reset()
	return in
}

func (in *Instrument) reset() {
	in.attempts, in.toolN = map[string]int{}, 0
	in.steps, in.calls = map[string]*step{}, map[string][]*call{}
}

// toolName is name when it is an offered tool, else "other".
func (in *Instrument) toolName(name string) string {
	if !in.tools[name] {
		return Other
	}
	return safeID(name)
}

func (in *Instrument) subject() []attr {
	a := []attr{enum(GenAIProviderName, in.sub.Provider, providers...), ident(GenAIRequestModel, in.sub.Model)}
	if in.sub.SessionID != "" {
		a = append(a, ident(GenAIConversationID, in.sub.SessionID), ident(AttrSessionID, in.sub.SessionID))
	}
	return a
}

// parent is the innermost open turn or run. Callers hold mu.
func (in *Instrument) parent() *span {
	if in.turn != nil {
		return in.turn
	}
	return in.run
}

// Observe returns an observer that records the kernel's events and then calls next (if any).
func (in *Instrument) Observe(next func(kernel.Event)) func(kernel.Event) {
	if in == nil {
		return next
	}
	return func(ev kernel.Event) {
		in.observe(ev)
		if next != nil {
			next(ev)
		}
	}
}

func (in *Instrument) observe(ev kernel.Event) {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch ev.Type {
	case kernel.EventAgentStart:
		in.endRun(nil)
		in.run = in.t.start(nil, SpanRun, KindInternal,
			append(in.subject(), constant(GenAIOperationName, OpInvokeAgent), constant(GenAIAgentName, AgentName))...)
	case kernel.EventTurnStart:
		in.endTurn(nil)
		in.turn = in.t.start(in.run, SpanTurn, KindInternal, count(AttrTurn, ev.Turn))
	case kernel.EventToolStart:
		if ev.Call == nil {
			return
		}
		name := in.toolName(ev.Call.Name)
		c := &call{span: in.t.start(in.parent(), ToolSpan(name), KindInternal,
			constant(GenAIOperationName, OpExecuteTool), constant(GenAIToolName, name), constant(GenAIToolType, "function"),
			ident(GenAIToolCallID, ev.Call.ID), count(AttrToolIndex, in.toolN))}
		in.toolN++
		in.calls[ev.Call.ID] = append(in.calls[ev.Call.ID], c)
	case kernel.EventToolEnd:
		if ev.Call == nil {
			return
		}
		q := in.calls[ev.Call.ID]
		if len(q) == 0 {
			return
		}
		c := q[0]
		in.calls[ev.Call.ID] = q[1:]
		isErr := ev.Message != nil && ev.Message.IsError
		outcome := ToolNotRun
		switch {
		case c.ran && isErr:
			outcome = ToolError
		case c.ran:
			outcome = ToolCompleted
		}
		c.span.set(flag(AttrToolIsError, isErr), constant(AttrToolOutcome, outcome))
		switch {
		case isErr && c.ran:
			c.span.fail(ErrTool)
		case isErr:
			c.span.fail(ToolNotRun)
		}
		c.span.end()
	case kernel.EventTurnEnd:
		in.endTurn(ev.Message)
	case kernel.EventAgentEnd:
		in.endRun(ev.Outcome)
	}
}

// endTurn closes the open turn (and whatever is still open in it) with its assistant message.
// Callers hold mu.
func (in *Instrument) endTurn(msg *llm.Message) {
	for id, s := range in.steps {
		s.unsettled()
		delete(in.steps, id)
	}
	for id, q := range in.calls {
		for _, c := range q {
			c.span.set(constant(AttrToolOutcome, ToolNotRun))
			c.span.end()
		}
		delete(in.calls, id)
	}
	in.model = nil
	if in.turn == nil {
		in.reset()
		return
	}
	if msg != nil {
		in.turn.set(stopReason(AttrTurnStopReason, msg.StopReason), count(AttrTurnToolCalls, len(msg.ToolCalls())))
		if msg.Failed() {
			in.turn.fail(failure(msg))
		}
		// The turn's outcome is durable up to here: a resumed session continues from this seq.
		cp := in.t.start(in.turn, SpanCheckpoint, KindInternal, constant(AttrCheckpointKind, CheckpointTurnEnd))
		if in.seq > 0 {
			cp.set(count(AttrSeq, int(in.seq)))
		}
		cp.end()
	}
	in.turn.end()
	in.turn = nil
	in.reset()
}

// endRun closes the open run with its outcome. Callers hold mu.
func (in *Instrument) endRun(out *kernel.Outcome) {
	in.endTurn(nil)
	if in.run == nil {
		return
	}
	if out != nil {
		in.run.set(enum(AttrRunStatus, string(out.Status), runStatuses...), count(AttrRunTurns, out.Turns))
		in.run.set(usage(out.Usage)...)
		if out.Status != kernel.StatusCompleted {
			in.run.fail(oneOf(string(out.Status), runStatuses...))
		}
	}
	in.run.end()
	in.run = nil
}

func (s *step) unsettled() {
	s.span.set(constant(AttrStepOutcome, OutcomeUnsettled))
	s.span.fail(OutcomeUnsettled)
	s.span.end()
	s.checkpoint.end()
}

// Recorder returns rec with every write traced (rein.session.write) and every intent opening
// a step (rein.step) that its settlement closes. A recorder with a Head method (a session)
// reports the ledger seq of each write.
func (in *Instrument) Recorder(rec kernel.Recorder) kernel.Recorder {
	if in == nil {
		return rec
	}
	h, _ := rec.(header)
	return &recorder{in: in, rec: rec, head: h}
}

// header is the optional capability of a recorder that writes a ledger.
type header interface {
	Head() (seq int64, hash string)
}

type recorder struct {
	in   *Instrument
	rec  kernel.Recorder
	head header
}

// Unwrap returns the recorder r decorates, so that optional capabilities of the underlying
// recorder stay reachable.
func (r *recorder) Unwrap() kernel.Recorder { return r.rec }

func (r *recorder) Intend(ctx context.Context, it kernel.Intent) error {
	s := r.in.intend(it)
	return r.write(s.span, WriteIntent, 1, it.ID, "", func() error { return r.rec.Intend(ctx, it) })
}

func (r *recorder) Settle(ctx context.Context, st kernel.Settlement) error {
	r.in.mu.Lock()
	s := r.in.steps[st.IntentID]
	var parent *span
	if s != nil {
		parent = s.span
	} else {
		parent = r.in.parent()
	}
	r.in.mu.Unlock()
	kind := WriteEntry
	if st.IntentID != "" && len(st.Entries) == 0 {
		kind = WriteClosed
	}
	entry := ""
	if len(st.Entries) == 1 {
		entry = st.Entries[0].ID
	}
	err := r.write(parent, kind, len(st.Entries), st.IntentID, entry, func() error { return r.rec.Settle(ctx, st) })
	if s != nil && err == nil {
		r.in.settle(st, s)
	}
	return err
}

// write runs one write of the recorder inside a rein.session.write span.
func (r *recorder) write(parent *span, kind string, items int, intent, entry string, do func() error) error {
	w := r.in.t.start(parent, SpanSessionWrite, KindInternal, constant(AttrWriteKind, kind), count(AttrWriteItems, items))
	if intent != "" {
		w.set(ident(AttrIntentID, intent))
	}
	if entry != "" {
		w.set(ident(AttrEntryID, entry))
	}
	err := do()
	if err != nil {
		w.fail(OutcomeFailed)
	} else if r.head != nil {
		seq, _ := r.head.Head()
		w.set(count(AttrSeq, int(seq)))
		r.in.mu.Lock()
		r.in.seq = seq
		r.in.mu.Unlock()
	}
	w.end()
	return err
}

// intend opens the step of an intent (and the checkpoint of a compaction).
func (in *Instrument) intend(it kernel.Intent) *step {
	in.mu.Lock()
	defer in.mu.Unlock()
	kind := oneOf(string(it.Kind), StepModelCall, StepToolCall, StepCompaction)
	in.attempts[kind]++
	s := &step{kind: kind}
	parent := in.parent()
	switch kind {
	case StepCompaction:
		s.checkpoint = in.t.start(parent, SpanCheckpoint, KindInternal,
			constant(AttrCheckpointKind, CheckpointCompaction), ident(AttrIntentID, it.ID))
		parent = s.checkpoint
	case StepToolCall:
		if it.Call != nil {
			for _, c := range in.calls[it.Call.ID] {
				if !c.ran {
					c.ran, s.call, parent = true, c, c.span
					c.span.set(enum(AttrToolReplay, string(it.Replay), replays...))
					break
				}
			}
		}
	}
	s.span = in.t.start(parent, SpanStep, KindInternal, constant(AttrStepKind, kind), ident(AttrIntentID, it.ID))
	if kind != StepToolCall {
		// The n-th model call (or compaction) of the turn: a second one follows an overflow.
		s.span.set(count(AttrStepAttempt, in.attempts[kind]))
	}
	if it.Turn > 0 {
		s.span.set(count(AttrTurn, it.Turn))
	}
	if kind == StepToolCall {
		s.span.set(enum(AttrToolReplay, string(it.Replay), replays...))
		if it.Call != nil {
			s.span.set(ident(GenAIToolCallID, it.Call.ID))
		}
	}
	if kind != StepToolCall {
		in.model = s.span
	}
	in.steps[it.ID] = s
	return s
}

// settle closes the step st settles.
func (in *Instrument) settle(st kernel.Settlement, s *step) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.steps, st.IntentID)
	if in.model == s.span {
		in.model = nil
	}
	outcome := OutcomeSucceeded
	switch {
	case len(st.Entries) == 0:
		outcome = OutcomeFailed
	case s.kind == StepModelCall:
		m := &st.Entries[0].Message
		switch {
		case m.StopReason == llm.StopAborted:
			outcome = OutcomeAborted
		case m.Failed() && m.Err != nil && m.Err.Kind == llm.KindContext:
			outcome = OutcomeOverflow
		case m.Failed():
			outcome = OutcomeFailed
		}
	}
	if len(st.Entries) == 1 {
		s.span.set(ident(AttrEntryID, st.Entries[0].ID))
	}
	s.span.set(constant(AttrStepOutcome, outcome))
	if outcome != OutcomeSucceeded {
		s.span.fail(outcome)
	}
	s.span.end()
	if s.checkpoint != nil {
		if len(st.Entries) == 1 && st.Entries[0].Compaction != nil {
			s.checkpoint.set(count(AttrTokensBefore, st.Entries[0].Compaction.TokensBefore))
		}
		if outcome != OutcomeSucceeded {
			s.checkpoint.fail(outcome)
		}
		s.checkpoint.end()
	}
}

// failure is error.type of a failed answer: its error kind (rate_limit, auth, …), else its stop
// reason (error, aborted).
func failure(msg *llm.Message) string {
	if msg.Err != nil {
		return oneOf(string(msg.Err.Kind), errorKinds...)
	}
	return oneOf(string(msg.StopReason), stopReasons...)
}

// Model returns m with every request traced as a "chat {model}" span under the step it
// belongs to.
func (in *Instrument) Model(m llm.Model) llm.Model {
	if in == nil {
		return m
	}
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		in.mu.Lock()
		parent := in.model
		if parent == nil {
			parent = in.parent()
		}
		in.mu.Unlock()
		maxTokens := req.MaxTokens
		if maxTokens == 0 {
			maxTokens = in.sub.MaxTokens
		}
		sp := in.t.start(parent, ChatSpan(in.sub.Model), KindClient, append([]attr{constant(GenAIOperationName, OpChat),
			enum(GenAIProviderName, in.sub.Provider, providers...), ident(GenAIRequestModel, in.sub.Model)}, in.server...)...)
		if maxTokens > 0 {
			sp.set(count(GenAIRequestMaxTokens, maxTokens))
		}
		if in.sub.SessionID != "" {
			sp.set(ident(GenAIConversationID, in.sub.SessionID))
		}
		var (
			attemptStart = time.Now()
			firstChunk   time.Duration
			chunks       int
			retries      int
		)
		msg := m.Stream(ctx, req, func(ev llm.Event) {
			switch ev.Type {
			case llm.EventStart:
				attemptStart, firstChunk = time.Now(), 0
			case llm.EventRetry:
				retries++
				a := []attr{count(AttrRetryAttempt, ev.Attempt), count(AttrRetryDelay, int(ev.DelayMs))}
				if ev.Err != nil {
					a = append(a, errorKind(ev.Err.Kind))
				}
				sp.event(EventRetry, a...)
			case llm.EventDone, llm.EventError:
			default:
				chunks++
				if firstChunk == 0 {
					firstChunk = max(time.Since(attemptStart), time.Microsecond)
				}
			}
			emit(ev)
		})
		sp.set(count(AttrRetryCount, retries), count(AttrChunkCount, chunks))
		if firstChunk > 0 {
			sp.set(count(AttrTimeToFirstChunk, int(firstChunk.Milliseconds())))
		}
		if msg != nil {
			if msg.Model != "" {
				sp.set(ident(GenAIResponseModel, msg.Model))
			}
			if msg.ResponseID != "" {
				sp.set(ident(GenAIResponseID, msg.ResponseID))
			}
			sp.set(finishReason(msg))
			if msg.Usage != nil {
				sp.set(usage(*msg.Usage)...)
			}
			if msg.Failed() {
				if msg.Err != nil && msg.Err.Status > 0 {
					sp.set(count(HTTPResponseStatusCode, msg.Err.Status))
				}
				sp.fail(failure(msg))
			}
		}
		sp.end()
		return msg
	})
}
