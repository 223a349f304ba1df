package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/wire"
)

// Host opens the agents the server drives. Package cli implements it over package system, so
// that this package does not depend on configuration.
type Host interface {
	// Open builds a runtime as req says. The agent must send its events to req.Observe and
	// poll req.Inbox. A resumed session is recovered before Open returns.
	Open(ctx context.Context, req OpenRequest) (*Runtime, error)
}

// OpenMode says which session an [OpenRequest] wants.
type OpenMode int

const (
	OpenStart OpenMode = iota // as the command line says
	OpenAgain                 // the current session (SessionDir; none in memory) with another model
	OpenNew                   // a new session (in memory when the command line said so)
	OpenFork                  // a new session forked from SessionID at Entry ("" for its leaf)
)

// OpenRequest asks the Host for a runtime.
type OpenRequest struct {
	Mode       OpenMode
	SessionID  string
	SessionDir string
	Entry      string
	// Provider and Model override the configured model when not empty (set_model).
	Provider, Model string
	// History and Usage are the conversation a runtime without a session continues (set_model
	// in a run without a session keeps it).
	History []llm.Message
	Usage   llm.Usage
	Observe func(kernel.Event)
	Inbox   kernel.Inbox
}

// Runtime is what the server drives.
type Runtime struct {
	// Agent runs the agent through its session lifecycle.
	Agent Agent
	// Session records the conversation; nil keeps it in the Agent's memory.
	Session *session.Session
	Model   llm.ModelInfo
	// Close releases the runtime (the session's writer lock).
	Close func() error
}

// Agent is the session lifecycle of a built agent (package system's Runtime implements it).
type Agent interface {
	// Begin opens one run for prompt (nil: continue) and returns the function that runs and
	// ends it.
	Begin(prompt *llm.Message) (func(context.Context) (*kernel.Outcome, error), error)
	// Context is the conversation the next run continues; Usage what it cost.
	Context() []llm.Message
	Usage() llm.Usage
	// Compact summarizes the older part of the conversation.
	Compact(ctx context.Context, instructions string) (before, after []llm.Message, err error)
	// Cancel records durably that the run in progress is being cancelled.
	Cancel(reason string) error
}

// Options tune a server.
type Options struct {
	// MaxLine is the longest command line accepted (default DefaultMaxLine).
	MaxLine int
	// Log receives what fits no response or event (a session that failed to close a run);
	// nil discards it.
	Log io.Writer
}

// ErrClosed is returned (wrapped) when stdout can no longer be written.
var ErrClosed = errors.New("rpc: the output is closed")

// job is the run or compaction in progress.
type job struct {
	kind   string // "run" or "compact"
	cancel context.CancelCauseFunc
	done   chan struct{}
}

type server struct {
	ctx  context.Context
	host Host
	out  *wire.Writer
	log  io.Writer

	convMu sync.Mutex
	conv   wire.Converter
	// ended holds a run's agent_end until the server is idle again, so that a client that
	// reads agent_end can send its next command at once.
	ended *kernel.Event

	mu        sync.Mutex
	rt        *Runtime
	provider  string // set_model's choice, kept across new_session and fork
	model     string
	job       *job
	steering  []llm.Message
	followUps []llm.Message
}

// errAborted is the cause of a run stopped by the abort command.
var errAborted = errors.New("aborted by the client")

// Serve runs the RPC protocol: commands from in, one per line, responses and events to out,
// one per line. It returns nil at the end of input once the run in progress has finished,
// and an error wrapping ctx's when ctx is cancelled (the run in progress is aborted and the
// abort recorded first).
func Serve(ctx context.Context, host Host, in io.Reader, out io.Writer, opts Options) error {
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := &server{ctx: ctx, host: host, out: wire.NewWriter(out), log: opts.Log}
	rt, err := host.Open(ctx, s.request(OpenRequest{Mode: OpenStart}))
	if err != nil {
		return err
	}
	s.rt = rt
	defer s.close()

	type read struct {
		line    []byte
		tooLong bool
		err     error
	}
	lines := make(chan read)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		lr := newLineReader(in, opts.MaxLine)
		for {
			line, tooLong, err := lr.next()
			select {
			case lines <- read{line, tooLong, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	interrupted := func() error {
		s.abort("interrupted")
		return fmt.Errorf("%w: %w", kernel.ErrAborted, context.Cause(ctx))
	}
	for {
		select {
		case <-ctx.Done():
			return interrupted()
		case r := <-lines:
			if r.err != nil {
				if !s.wait(ctx) {
					return interrupted()
				}
				if errors.Is(r.err, io.EOF) {
					return s.outErr()
				}
				return fmt.Errorf("rpc: reading commands: %w", r.err)
			}
			if r.tooLong {
				s.respond(header{}, CommandParse, nil, fmt.Errorf("command line longer than %d bytes", opts.MaxLine))
			} else {
				s.handle(r.line)
			}
			if err := s.outErr(); err != nil {
				s.abort("the client went away")
				return err
			}
		}
	}
}

func (s *server) outErr() error {
	if err := s.out.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}

// request fills in what every OpenRequest carries.
func (s *server) request(r OpenRequest) OpenRequest {
	r.Observe, r.Inbox = s.observe, s
	if r.Provider == "" && r.Model == "" {
		r.Provider, r.Model = s.provider, s.model
	}
	return r
}

func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt != nil {
		if err := s.rt.Close(); err != nil {
			fmt.Fprintf(s.log, "rein: closing the session: %v\n", err)
		}
		s.rt = nil
	}
}

// observe writes a kernel event to the stream; agent_end is held back until the run's job
// is over (see emitEnd).
func (s *server) observe(ev kernel.Event) {
	s.convMu.Lock()
	defer s.convMu.Unlock()
	if ev.Type == kernel.EventAgentEnd {
		s.ended = &ev
		return
	}
	if w, ok := s.conv.Convert(ev); ok {
		_ = s.out.Write(w)
	}
}

// emitEnd writes the held agent_end, once the server no longer counts the run as in progress.
func (s *server) emitEnd() {
	s.convMu.Lock()
	defer s.convMu.Unlock()
	if s.ended == nil {
		return
	}
	if w, ok := s.conv.Convert(*s.ended); ok {
		_ = s.out.Write(w)
	}
	s.ended = nil
}

// queueUpdate writes the queue; callers hold s.mu.
func (s *server) queueUpdate() {
	_ = s.out.Write(wire.Event{V: wire.Version, Type: wire.TypeQueueUpdate, Queue: wire.NewQueue(s.steering, s.followUps)})
}

// Steering implements kernel.Inbox.
func (s *server) Steering() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.steering
	if len(out) > 0 {
		s.steering = nil
		s.queueUpdate()
	}
	return out
}

// FollowUps implements kernel.Inbox.
func (s *server) FollowUps() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.followUps
	if len(out) > 0 {
		s.followUps = nil
		s.queueUpdate()
	}
	return out
}

func (s *server) respond(h header, command string, data any, err error) {
	r := Response{V: wire.Version, Type: TypeResponse, ID: h.ID, Command: command, Success: err == nil, Data: data}
	if err != nil {
		r.Data, r.Error = nil, err.Error()
	}
	_ = s.out.Write(r)
}

// A handler answers one command. It returns the response data or an error; then, once the
// response is written, after (if not nil) runs: a command that starts work answers first.
// A handler that answers later itself (compact) returns errLater.
type handler func(s *server, line []byte) (data any, after func(), err error)

var errLater = errors.New("answered later")

func (s *server) handle(line []byte) {
	if len(strings.TrimSpace(string(line))) == 0 {
		return // blank lines are keep-alives
	}
	h, err := parseHeader(line)
	if err != nil {
		s.respond(h, CommandParse, nil, err)
		return
	}
	fn, ok := handlerMap()[h.Type]
	if !ok {
		s.respond(h, h.Type, nil, fmt.Errorf("unknown command %q (known: %s)", h.Type, knownCommands()))
		return
	}
	data, after, err := fn(s, line)
	if errors.Is(err, errLater) {
		return
	}
	s.respond(h, h.Type, data, err)
	if after != nil {
		after()
	}
}

// wait blocks until no job runs; false if ctx ended first.
func (s *server) wait(ctx context.Context) bool {
	for {
		s.mu.Lock()
		j := s.job
		s.mu.Unlock()
		if j == nil {
			return true
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return false
		}
	}
}

// abort stops the job in progress, recording the cancellation durably before signalling it,
// drops the queued messages and waits until the job has ended. It reports whether a job ran
// and how many queued messages were dropped.
func (s *server) abort(reason string) (bool, int) {
	s.mu.Lock()
	j := s.job
	dropped := len(s.steering) + len(s.followUps)
	if dropped > 0 {
		s.steering, s.followUps = nil, nil
		s.queueUpdate()
	}
	if j == nil {
		s.mu.Unlock()
		return false, dropped
	}
	if s.rt != nil {
		if err := s.rt.Agent.Cancel(reason); err != nil {
			fmt.Fprintf(s.log, "rein: recording the abort: %v\n", err)
		}
	}
	j.cancel(errAborted)
	s.mu.Unlock()
	<-j.done
	return true, dropped
}

// idle returns an error unless nothing runs and an agent is open; callers hold s.mu.
func (s *server) idle(what string) error {
	if s.rt == nil {
		return errors.New("no agent is open (a previous command failed to reopen it); try set_model or new_session")
	}
	if s.job != nil {
		return fmt.Errorf("cannot %s while a %s is in progress; abort it or wait for it to end", what, s.job.kind)
	}
	return nil
}

// context returns the conversation as the next run continues it; callers hold s.mu.
func (s *server) context() []llm.Message {
	if s.rt == nil {
		return nil
	}
	return s.rt.Agent.Context()
}

// startRun opens a run with prompt (nil: continue the conversation); callers hold s.mu and
// have checked idle. The returned function starts it, after the response is written.
func (s *server) startRun(prompt *llm.Message) (func(), error) {
	run, err := s.rt.Agent.Begin(prompt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(s.ctx))
	j := &job{kind: "run", cancel: cancel, done: make(chan struct{})}
	s.job = j
	rt := s.rt
	return func() { go s.run(j, ctx, rt, run) }, nil
}

// run runs the agent until it stops, then, if it completed and messages were queued after
// its last look at the inbox, runs again with them.
func (s *server) run(j *job, ctx context.Context, rt *Runtime, run func(context.Context) (*kernel.Outcome, error)) {
	defer j.cancel(nil)
	for {
		out, err := run(ctx)
		status := string(kernel.StatusFailed)
		if out != nil {
			status = string(out.Status)
		}
		if err != nil && out != nil && out.Err == nil && rt.Session != nil {
			// The run completed; what failed is its end record (events told the rest).
			fmt.Fprintf(s.log, "rein: closing the run in session %s: %v\n", rt.Session.ID(), err)
		}
		s.mu.Lock()
		next := s.takeQueued()
		if next == nil || status != string(kernel.StatusCompleted) || ctx.Err() != nil {
			if next != nil || len(s.steering)+len(s.followUps) > 0 {
				s.steering, s.followUps = nil, nil
				s.queueUpdate()
			}
			s.job = nil
			s.emitEnd()
			close(j.done)
			s.mu.Unlock()
			return
		}
		if run, err = rt.Agent.Begin(next); err != nil {
			fmt.Fprintf(s.log, "rein: starting a run for the queued messages: %v\n", err)
			s.job = nil
			s.emitEnd()
			close(j.done)
			s.mu.Unlock()
			return
		}
		s.emitEnd()
		s.mu.Unlock()
	}
}

// takeQueued removes the first queued message (steering before follow-ups) to start a run
// with; callers hold s.mu.
func (s *server) takeQueued() *llm.Message {
	var m llm.Message
	switch {
	case len(s.steering) > 0:
		m, s.steering = s.steering[0], s.steering[1:]
	case len(s.followUps) > 0:
		m, s.followUps = s.followUps[0], s.followUps[1:]
	default:
		return nil
	}
	s.queueUpdate()
	return &m
}

// reopen replaces the runtime as req says; callers hold s.mu and have checked idle. A new or
// forked session is opened before the current one closes; the same session (another model)
// must be closed first, and is reopened as it was if the new configuration fails.
func (s *server) reopen(req OpenRequest) error {
	old := s.rt
	if req.Mode == OpenAgain {
		if old.Session == nil {
			req.History, req.Usage = old.Agent.Context(), old.Agent.Usage()
		}
		if err := old.Close(); err != nil {
			fmt.Fprintf(s.log, "rein: closing the session: %v\n", err)
		}
		s.rt = nil
		rt, err := s.host.Open(s.ctx, s.request(req))
		if err != nil {
			back := req
			back.Provider, back.Model = s.provider, s.model
			if rt, rerr := s.host.Open(s.ctx, s.request(back)); rerr == nil {
				s.rt = rt
			} else {
				err = fmt.Errorf("%w; reopening with the previous model failed too: %w", err, rerr)
			}
			return err
		}
		s.rt = rt
		return nil
	}
	rt, err := s.host.Open(s.ctx, s.request(req))
	if err != nil {
		return err
	}
	if err := old.Close(); err != nil {
		fmt.Fprintf(s.log, "rein: closing the session: %v\n", err)
	}
	s.rt = rt
	return nil
}
