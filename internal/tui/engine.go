package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/wire"
)

// errAborted is the cause of a run the user stopped.
var errAborted = errors.New("aborted by the user")

// engine connects the UI goroutine with the agent's goroutines. Everything the agent side
// has to say (events, queue changes, questions, a run's end) arrives as one message at a
// time on msgs, which the UI reads with [engine.wait]; the UI goroutine owns the rest of the
// model. Fields under mu are shared with the agent's goroutines.
type engine struct {
	host Host
	msgs chan tea.Msg
	// closed is closed when the UI has stopped reading msgs.
	closed    chan struct{}
	closeOnce sync.Once
	// started is set once the UI reads msgs; what comes before (a resumed session's
	// recovery while it opens) is not shown as it happens.
	started atomic.Bool

	mu        sync.Mutex
	rt        Runtime
	info      Info
	conv      *wire.Converter
	steering  []llm.Message
	followUps []llm.Message
	// order says, oldest first, which queue each waiting message is in (true: follow-ups),
	// so that the last queued can be taken back.
	order []bool
	// cancel and done belong to the run in progress (nil when idle).
	cancel context.CancelCauseFunc
	done   chan struct{}
	// early are the notices that came before the UI started.
	early []string
	// allowed are the calls the user allowed for this session: tool and part.
	allowed map[[2]string]bool
	// thinking is the reasoning effort /thinking chose ("" the configured); every reopen
	// keeps it.
	thinking string
}

func newEngine(host Host) *engine {
	return &engine{host: host, msgs: make(chan tea.Msg), closed: make(chan struct{}), allowed: map[[2]string]bool{}}
}

// engineMsg marks what arrives on msgs: the UI waits for the next one after each, so that
// exactly one [engine.wait] is outstanding and the agent's messages arrive in the order they
// were sent. What a command of the UI's own returns (openedMsg, compactedMsg, editedMsg) is
// not an engineMsg: a second waiter would race the first and swap streamed deltas.
type engineMsg interface{ fromEngine() }

type eventMsg struct{ ev wire.Event }
type queueMsg struct{ steering, followUps int }
type noticeMsg struct{ text string }
type runDoneMsg struct {
	out *kernel.Outcome
	err error
}
type askMsg struct {
	approval *Approval
	question string
	reply    chan Answer
}
type openedMsg struct {
	rt   Runtime
	info Info
	err  error
	// what opened it, for the transcript; fresh: a new session (the transcript starts over)
	what  string
	fresh bool
}
type compactedMsg struct {
	before, after int
	err           error
}

func (eventMsg) fromEngine()   {}
func (queueMsg) fromEngine()   {}
func (noticeMsg) fromEngine()  {}
func (runDoneMsg) fromEngine() {}
func (askMsg) fromEngine()     {}

// wait is the command that delivers the next message from the agent side.
func (e *engine) wait() tea.Cmd {
	return func() tea.Msg {
		select {
		case m := <-e.msgs:
			return m
		case <-e.closed:
			return nil
		}
	}
}

// send hands m to the UI; false once the UI stopped.
func (e *engine) send(m tea.Msg) bool {
	if !e.started.Load() {
		return false
	}
	select {
	case e.msgs <- m:
		return true
	case <-e.closed:
		return false
	}
}

func (e *engine) stop() { e.closeOnce.Do(func() { close(e.closed) }) }

// request fills in what every Request carries.
func (e *engine) request(r Request, confirm bool) Request {
	r.Observe, r.Inbox, r.Approve, r.Notice = e.observe, e, e.approve, e.notice
	if r.Thinking == "" {
		e.mu.Lock()
		r.Thinking = e.thinking
		e.mu.Unlock()
	}
	if confirm {
		r.Confirm = e.confirm
	}
	return r
}

// observe converts a kernel event to the wire (the stream every mode shows) and sends it.
// The kernel serializes its events, so one converter per runtime is enough.
func (e *engine) observe(ev kernel.Event) {
	e.mu.Lock()
	conv := e.conv
	e.mu.Unlock()
	if w, ok := conv.Convert(ev); ok {
		e.send(eventMsg{w})
	}
}

// notice implements Request.Notice: one line in the conversation (kept until the UI runs).
func (e *engine) notice(text string) {
	e.mu.Lock()
	if !e.started.Load() {
		e.early = append(e.early, text)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	e.send(noticeMsg{text})
}

// set makes rt the current runtime, with a fresh converter.
func (e *engine) set(rt Runtime, info Info) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rt, e.info, e.conv = rt, info, &wire.Converter{}
}

func (e *engine) runtime() Runtime {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rt
}

// Steering implements kernel.Inbox.
func (e *engine) Steering() []llm.Message {
	e.mu.Lock()
	out := e.steering
	e.steering = nil
	e.order = slices.DeleteFunc(e.order, func(f bool) bool { return !f })
	q := queueMsg{0, len(e.followUps)}
	e.mu.Unlock()
	if len(out) > 0 {
		e.send(q)
	}
	return out
}

// FollowUps implements kernel.Inbox.
func (e *engine) FollowUps() []llm.Message {
	e.mu.Lock()
	out := e.followUps
	e.followUps = nil
	e.order = slices.DeleteFunc(e.order, func(f bool) bool { return f })
	q := queueMsg{len(e.steering), 0}
	e.mu.Unlock()
	if len(out) > 0 {
		e.send(q)
	}
	return out
}

// enqueue queues m for the running agent; it returns the queue's lengths.
func (e *engine) enqueue(m llm.Message, followUp bool) queueMsg {
	e.mu.Lock()
	defer e.mu.Unlock()
	if followUp {
		e.followUps = append(e.followUps, m)
	} else {
		e.steering = append(e.steering, m)
	}
	e.order = append(e.order, followUp)
	return queueMsg{len(e.steering), len(e.followUps)}
}

// unqueueLast takes back the message queued last, before the agent takes it; ok is false
// when nothing waits. It returns the queue's lengths after.
func (e *engine) unqueueLast() (text string, ok bool, q queueMsg) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.order); n > 0 {
		followUp := e.order[n-1]
		e.order = e.order[:n-1]
		list := &e.steering
		if followUp {
			list = &e.followUps
		}
		last := len(*list) - 1
		text, *list, ok = typed((*list)[last]), (*list)[:last], true
	}
	return text, ok, queueMsg{len(e.steering), len(e.followUps)}
}

// queued returns the texts waiting, steering first.
func (e *engine) queued() (steering, followUps []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.steering {
		steering = append(steering, typed(e.steering[i]))
	}
	for i := range e.followUps {
		followUps = append(followUps, typed(e.followUps[i]))
	}
	return steering, followUps
}

// takeQueued removes the first queued message (steering before follow-ups), nil if none.
func (e *engine) takeQueued() *llm.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	var m llm.Message
	switch {
	case len(e.steering) > 0:
		m, e.steering = e.steering[0], e.steering[1:]
		e.order = dropFirst(e.order, false)
	case len(e.followUps) > 0:
		m, e.followUps = e.followUps[0], e.followUps[1:]
		e.order = dropFirst(e.order, true)
	default:
		return nil
	}
	return &m
}

// dropFirst removes the first v from order.
func dropFirst(order []bool, v bool) []bool {
	i := slices.Index(order, v)
	return slices.Delete(order, i, i+1)
}

// dropQueued empties the queue and returns the texts it held.
func (e *engine) dropQueued() []string {
	s, f := e.queued()
	e.mu.Lock()
	e.steering, e.followUps, e.order = nil, nil, nil
	e.mu.Unlock()
	return append(s, f...)
}

// start begins a run for prompt (nil: continue) on the current runtime and runs it on a
// goroutine of its own; its end arrives as a runDoneMsg.
func (e *engine) start(ctx context.Context, prompt *llm.Message) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rt == nil {
		return errors.New("no agent is open (reopening it failed): try /model or /new, or /quit")
	}
	if e.cancel != nil {
		return errors.New("a run is in progress")
	}
	run, err := e.rt.Begin(prompt)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	e.cancel, e.done = cancel, done
	go func() {
		var out *kernel.Outcome
		var err error
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("the run panicked: %v", p)
			}
			cancel(nil)
			e.mu.Lock()
			e.cancel, e.done = nil, nil
			e.mu.Unlock()
			close(done)
			e.send(runDoneMsg{out, err})
		}()
		out, err = run(runCtx)
	}()
	return nil
}

// abort records the cancellation durably, then signals the run in progress; it reports
// whether a run was in progress. It does not wait: the run's end arrives as a runDoneMsg.
func (e *engine) abort(reason string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancel == nil {
		return false, nil
	}
	err := e.rt.Cancel(reason)
	e.cancel(errAborted)
	return true, err
}

// running reports whether a run is in progress.
func (e *engine) running() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cancel != nil
}

// finish waits for the run in progress (one whose context was cancelled ends soon) and
// closes the runtime.
func (e *engine) finish() error {
	e.mu.Lock()
	done, rt := e.done, e.rt
	e.rt = nil
	e.mu.Unlock()
	if done != nil {
		<-done
	}
	if rt == nil {
		return nil
	}
	return rt.Close()
}

// approve implements Request.Approve: a call allowed for the session passes, and so does one
// whose "always allow" rule (RuleWriter.AllowRule) a settings file in force lists; any other
// is put to the user, who answers in the UI.
func (e *engine) approve(ctx context.Context, a Approval) (Answer, error) {
	e.mu.Lock()
	ok := e.allowed[[2]string{a.Tool, a.Part}]
	trusted := e.info.Trusted
	e.mu.Unlock()
	if ok {
		return Answer{Allow: true}, nil
	}
	if r := e.rules(); r != nil && r.AlwaysAllowed(r.AllowRule(a), trusted) {
		return Answer{Allow: true}, nil
	}
	return e.ask(ctx, askMsg{approval: &a})
}

// allowAlways writes the call's rule to the project's (project) or the user's settings and
// allows the call for the rest of this session at once; it returns the rule and the file.
func (e *engine) allowAlways(a *Approval, project bool) (rule, path string, err error) {
	r := e.rules()
	if r == nil {
		return "", "", errors.New("this UI cannot write settings")
	}
	rule = r.AllowRule(*a)
	path, err = r.AllowAlways(rule, project)
	if err != nil {
		return rule, "", err
	}
	e.allowSession(a)
	return rule, path, nil
}

// allowSession remembers that the user allows this call for the rest of the session.
func (e *engine) allowSession(a *Approval) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowed[[2]string{a.Tool, a.Part}] = true
}

// confirm implements Request.Confirm: a yes/no question in the UI.
func (e *engine) confirm(question string) (bool, error) {
	a, err := e.ask(context.Background(), askMsg{question: question})
	return a.Allow, err
}

func (e *engine) ask(ctx context.Context, m askMsg) (Answer, error) {
	m.reply = make(chan Answer, 1)
	if !e.send(m) {
		return Answer{}, errors.New("the UI has stopped")
	}
	select {
	case a := <-m.reply:
		return a, nil
	case <-ctx.Done():
		return Answer{}, context.Cause(ctx)
	case <-e.closed:
		return Answer{}, errors.New("the UI has stopped")
	}
}
