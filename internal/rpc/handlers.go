package rpc

import (
	"context"
	"errors"
	"fmt"
	"github.com/reinhq/rein/internal/lazy"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/wire"
)

// handlers maps each command type to its handler; built on first use (an init function would
// run at every start of rein, RPC or not; a package-level initializer would be a cycle).
var handlers lazy.Value[map[string]handler]

// handlerMap returns handlers, built.
func handlerMap() map[string]handler { return handlers.Get(buildHandlers) }

func buildHandlers() map[string]handler {
	return map[string]handler{
		"prompt":                  (*server).prompt,
		"steer":                   (*server).steer,
		"follow_up":               (*server).followUp,
		"continue":                (*server).continueRun,
		"abort":                   (*server).abortCmd,
		"get_state":               (*server).getState,
		"get_messages":            (*server).getMessages,
		"get_session_stats":       (*server).getStats,
		"get_last_assistant_text": (*server).lastText,
		"set_model":               (*server).setModel,
		"set_session_name":        (*server).setName,
		"compact":                 (*server).compact,
		"new_session":             (*server).newSession,
		"fork":                    (*server).fork,
	}
}

// Streaming behaviours of a prompt sent during a run.
const (
	behaviourSteer    = "steer"
	behaviourFollowUp = "follow_up"
)

func (s *server) prompt(line []byte) (any, func(), error) {
	var c messageCmd
	if err := decode(line, &c); err != nil {
		return nil, nil, err
	}
	switch c.StreamingBehavior {
	case "", behaviourSteer, behaviourFollowUp:
	default:
		return nil, nil, fmt.Errorf("streamingBehavior %q: want %q or %q", c.StreamingBehavior, behaviourSteer, behaviourFollowUp)
	}
	return s.message(c, c.StreamingBehavior)
}

func (s *server) steer(line []byte) (any, func(), error) {
	var c messageCmd
	if err := decode(line, &c); err != nil {
		return nil, nil, err
	}
	if c.StreamingBehavior != "" {
		return nil, nil, errors.New("streamingBehavior is for prompt only")
	}
	return s.message(c, behaviourSteer)
}

func (s *server) followUp(line []byte) (any, func(), error) {
	var c messageCmd
	if err := decode(line, &c); err != nil {
		return nil, nil, err
	}
	if c.StreamingBehavior != "" {
		return nil, nil, errors.New("streamingBehavior is for prompt only")
	}
	return s.message(c, behaviourFollowUp)
}

// message queues c's message for the run in progress (as behaviour says), or starts a run
// with it.
func (s *server) message(c messageCmd, behaviour string) (any, func(), error) {
	if c.Message == "" {
		return nil, nil, errors.New("message is empty")
	}
	m := llm.UserText(c.Message)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.job != nil && s.job.kind == "run" {
		switch behaviour {
		case behaviourSteer:
			s.steering = append(s.steering, m)
		case behaviourFollowUp:
			s.followUps = append(s.followUps, m)
		default:
			return nil, nil, errors.New("a run is in progress: send steer or follow_up, or prompt with streamingBehavior")
		}
		s.queueUpdate()
		return QueuedData{Queued: behaviour, Pending: len(s.steering) + len(s.followUps)}, nil, nil
	}
	if err := s.idle("start a run"); err != nil {
		return nil, nil, err
	}
	start, err := s.startRun(&m)
	if err != nil {
		return nil, nil, err
	}
	return StartedData{Started: true}, start, nil
}

func (s *server) continueRun(line []byte) (any, func(), error) {
	if err := decode(line, &plainCmd{}); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idle("continue"); err != nil {
		return nil, nil, err
	}
	h := s.context()
	if n := len(h); n == 0 || h[n-1].Role == llm.RoleAssistant && !h[n-1].Failed() {
		return nil, nil, errors.New("nothing to continue: the conversation does not wait for the model")
	}
	start, err := s.startRun(nil)
	if err != nil {
		return nil, nil, err
	}
	return StartedData{Started: true}, start, nil
}

func (s *server) abortCmd(line []byte) (any, func(), error) {
	if err := decode(line, &plainCmd{}); err != nil {
		return nil, nil, err
	}
	aborted, dropped := s.abort("aborted by the client")
	return AbortData{Aborted: aborted, Discarded: dropped}, nil, nil
}

func (s *server) getState(line []byte) (any, func(), error) {
	if err := decode(line, &plainCmd{}); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := StateData{Queue: wire.NewQueue(s.steering, s.followUps), PendingMessageCount: len(s.steering) + len(s.followUps)}
	if s.job != nil {
		st.IsStreaming, st.IsCompacting = s.job.kind == "run", s.job.kind == "compact"
	}
	if s.rt != nil {
		st.Model = &ModelData{Provider: s.rt.Model.Provider, ID: s.rt.Model.ID, ContextWindow: s.rt.Model.ContextWindow}
		if sess := s.rt.Session; sess != nil {
			st.SessionID, st.SessionDir, st.SessionName = sess.ID(), sess.Dir(), sess.Fact("name")
		}
	}
	st.MessageCount = len(s.context())
	return st, nil, nil
}

func (s *server) getMessages(line []byte) (any, func(), error) {
	if err := decode(line, &plainCmd{}); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := MessagesData{Messages: []*wire.Message{}}
	for _, m := range s.context() {
		d.Messages = append(d.Messages, wire.NewMessage(&m))
	}
	return d, nil, nil
}

func (s *server) getStats(line []byte) (any, func(), error) {
	if err := decode(line, &plainCmd{}); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var d StatsData
	var usage llm.Usage
	if s.rt != nil {
		d.ContextWindow, usage = s.rt.Model.ContextWindow, s.rt.Agent.Usage()
		if sess := s.rt.Session; sess != nil {
			d.SessionID = sess.ID()
		}
	}
	d.Usage = wire.NewUsage(usage)
	for _, m := range s.context() {
		d.TotalMessages++
		switch m.Role {
		case llm.RoleUser:
			d.UserMessages++
		case llm.RoleAssistant:
			d.AssistantMessages++
			d.ToolCalls += len(m.ToolCalls())
		case llm.RoleTool:
			d.ToolResults++
		}
	}
	return d, nil, nil
}

func (s *server) lastText(line []byte) (any, func(), error) {
	if err := decode(line, &plainCmd{}); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.context()
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == llm.RoleAssistant && !h[i].Failed() {
			t := h[i].Text()
			return TextData{Text: &t}, nil, nil
		}
	}
	return TextData{}, nil, nil
}

func (s *server) setModel(line []byte) (any, func(), error) {
	var c setModelCmd
	if err := decode(line, &c); err != nil {
		return nil, nil, err
	}
	if c.ModelID == "" {
		return nil, nil, errors.New("modelId is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idle("change the model"); err != nil {
		return nil, nil, err
	}
	req := OpenRequest{Mode: OpenAgain, Provider: c.Provider, Model: c.ModelID}
	if c.Provider == "" {
		req.Provider = s.rt.Model.Provider
	}
	if sess := s.rt.Session; sess != nil {
		req.SessionID, req.SessionDir = sess.ID(), sess.Dir()
	}
	if err := s.reopen(req); err != nil {
		return nil, nil, err
	}
	s.provider, s.model = req.Provider, req.Model
	return ModelData{Provider: s.rt.Model.Provider, ID: s.rt.Model.ID, ContextWindow: s.rt.Model.ContextWindow}, nil, nil
}

func (s *server) setName(line []byte) (any, func(), error) {
	var c nameCmd
	if err := decode(line, &c); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt == nil || s.rt.Session == nil {
		return nil, nil, errors.New("there is no session to name (--no-session)")
	}
	return nil, nil, s.rt.Session.SetFact("name", c.Name)
}

// compact runs in the background like a run, so that abort can stop it; its response comes
// when it is done.
func (s *server) compact(line []byte) (any, func(), error) {
	var c compactCmd
	if err := decode(line, &c); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idle("compact"); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(s.ctx))
	j := &job{kind: "compact", cancel: cancel, done: make(chan struct{})}
	s.job = j
	rt := s.rt
	h := c.header
	go func() {
		defer cancel(nil)
		before, after, err := rt.Agent.Compact(ctx, c.CustomInstructions)
		var data any
		if err == nil {
			d := CompactData{Summary: after[0].Text(), MessagesBefore: len(before), MessagesAfter: len(after)}
			if len(after) > 1 {
				d.FirstKeptEntryID = after[1].ID
			}
			data = d
		}
		s.mu.Lock()
		s.respond(h, h.Type, data, err)
		s.job = nil
		close(j.done)
		s.mu.Unlock()
	}()
	return nil, nil, errLater
}

func (s *server) newSession(line []byte) (any, func(), error) {
	if err := decode(line, &plainCmd{}); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idle("start a new session"); err != nil {
		return nil, nil, err
	}
	var d SessionData
	if sess := s.rt.Session; sess != nil {
		d.PreviousSession = sess.ID()
	}
	if err := s.reopen(OpenRequest{Mode: OpenNew}); err != nil {
		return nil, nil, err
	}
	if sess := s.rt.Session; sess != nil {
		d.SessionID, d.SessionDir = sess.ID(), sess.Dir()
	}
	return d, nil, nil
}

func (s *server) fork(line []byte) (any, func(), error) {
	var c forkCmd
	if err := decode(line, &c); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idle("fork"); err != nil {
		return nil, nil, err
	}
	sess := s.rt.Session
	if sess == nil {
		return nil, nil, errors.New("there is no session to fork (--no-session)")
	}
	d := SessionData{ParentSession: sess.ID()}
	if err := s.reopen(OpenRequest{Mode: OpenFork, SessionID: sess.ID(), SessionDir: sess.Dir(), Entry: c.EntryID}); err != nil {
		return nil, nil, err
	}
	if ns := s.rt.Session; ns != nil {
		d.SessionID, d.SessionDir = ns.ID(), ns.Dir()
		h := ns.Context()
		for i := len(h) - 1; i >= 0 && d.EntryID == ""; i-- {
			if h[i].Role != llm.RoleTool {
				d.EntryID = h[i].ID // the fork point: its tool results, if any, follow it
			}
		}
	}
	return d, nil, nil
}
