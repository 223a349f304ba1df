package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/wire"
)

// block is a tool that runs until its context ends, after saying it started.
type block struct{ started chan struct{} }

func (b *block) Spec() tool.Spec {
	return tool.Spec{Name: "block", Description: "blocks", Snippet: "block",
		Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

func (b *block) Run(ctx context.Context, _ tool.Call) (tool.Result, error) {
	close(b.started)
	<-ctx.Done()
	return tool.Result{}, ctx.Err()
}

// slowCompactor compacts only when its context ends (with an error).
type slowCompactor struct{ started chan struct{} }

func (c *slowCompactor) Needed([]llm.Message) bool { return false }
func (c *slowCompactor) Compact(ctx context.Context, _ []llm.Message, _ string) (llm.Message, int, int, llm.Usage, error) {
	close(c.started)
	<-ctx.Done()
	return llm.Message{}, 0, 0, llm.Usage{}, ctx.Err()
}

// memHost opens in-memory agents on a script model.
type memHost struct {
	t         *testing.T
	scenario  string
	tools     []tool.Tool
	compactor kernel.Compactor
	// observe, if set, sees each event before the server does.
	observe func(kernel.Event)
}

func (h *memHost) Open(_ context.Context, req OpenRequest) (*Runtime, error) {
	m, err := script.Parse([]byte(h.scenario), "s.yaml")
	if err != nil {
		h.t.Fatal(err)
	}
	set, err := tool.New(h.tools...)
	if err != nil {
		h.t.Fatal(err)
	}
	obs := req.Observe
	if h.observe != nil {
		obs = func(ev kernel.Event) { h.observe(ev); req.Observe(ev) }
	}
	a, err := kernel.New(kernel.Config{Model: m, Tools: set, Recorder: &kernel.Memory{}, Observe: obs, Inbox: req.Inbox, Compactor: h.compactor})
	if err != nil {
		return nil, err
	}
	return &Runtime{Agent: &memAgent{a: a}, Model: llm.ModelInfo{Provider: "script", ID: "script"}, Close: func() error { return nil }}, nil
}

// memAgent runs a kernel agent with its conversation in memory, as a runtime without a
// session does (the real lifecycle is package system's; internal/cli's RPC tests drive it).
type memAgent struct {
	a       *kernel.Agent
	mu      sync.Mutex
	history []llm.Message
	usage   llm.Usage
}

func (m *memAgent) Begin(prompt *llm.Message) (func(context.Context) (*kernel.Outcome, error), error) {
	return func(ctx context.Context) (*kernel.Outcome, error) {
		var out *kernel.Outcome
		var err error
		if prompt == nil {
			out, err = m.a.Continue(ctx, m.Context())
		} else {
			out, err = m.a.Run(ctx, m.Context(), *prompt)
		}
		if out != nil {
			m.mu.Lock()
			m.history = append(m.history, out.Messages...)
			m.usage.Add(out.Usage)
			m.mu.Unlock()
		}
		return out, err
	}, nil
}

func (m *memAgent) Context() []llm.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Message(nil), m.history...)
}

func (m *memAgent) Usage() llm.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

func (m *memAgent) Compact(ctx context.Context, instructions string) (before, after []llm.Message, err error) {
	before = m.Context()
	if after, err = m.a.Compact(ctx, before, instructions); err == nil {
		m.mu.Lock()
		m.history = after
		m.mu.Unlock()
	}
	return before, after, err
}

func (m *memAgent) Cancel(string) error { return nil }

// syncBuffer is an output the test reads while the server writes.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	grew chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{grew: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.grew <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor blocks until the output contains sub.
func (s *syncBuffer) waitFor(sub string) {
	for !strings.Contains(s.String(), sub) {
		<-s.grew
	}
}

// A message queued after the agent's last look at its inbox (here: while agent_end is being
// reported) starts another run once the first completes.
func TestQueuedAfterTheLastPollStartsAnotherRun(t *testing.T) {
	var s *server
	injected := false
	host := &memHost{t: t, scenario: `version: 1
dialogs:
  - match: ^first$
    turns: [{text: One.}]
  - match: ^late$
    turns: [{text: Two.}]
`}
	host.observe = func(ev kernel.Event) {
		if ev.Type == kernel.EventAgentEnd && !injected {
			injected = true
			s.handle([]byte(`{"id":"late","type":"follow_up","message":"late"}`))
		}
	}
	out := newSyncBuffer()
	s = &server{ctx: context.Background(), host: host, log: io.Discard}
	s.out = wire.NewWriter(out)
	rt, err := host.Open(context.Background(), s.request(OpenRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	s.rt = rt
	s.handle([]byte(`{"id":"p","type":"prompt","message":"first"}`))
	s.wait(context.Background())
	text := out.String()
	if n := strings.Count(text, `"type":"agent_end"`); n != 2 {
		t.Fatalf("%d runs:\n%s", n, text)
	}
	if !strings.Contains(text, `"id":"late","command":"follow_up","success":true,"data":{"queued":"follow_up","pending":1}`) {
		t.Errorf("the late follow-up was not queued:\n%s", text)
	}
	if h := s.context(); len(h) != 4 || h[len(h)-1].Text() != "Two." {
		t.Errorf("history %v (%d messages)", h, len(h))
	}
}

// Cancelling Serve's context aborts the run in progress and returns an ErrAborted error.
func TestServeInterrupted(t *testing.T) {
	b := &block{started: make(chan struct{})}
	host := &memHost{t: t, tools: []tool.Tool{b}, scenario: `version: 1
turns:
  - calls: [{name: block, id: b1, args: {}}]
  - text: never
`}
	ctx, cancel := context.WithCancel(context.Background())
	in, feed := io.Pipe()
	out := newSyncBuffer()
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, host, in, out, Options{}) }()
	if _, err := io.WriteString(feed, `{"type":"prompt","message":"go"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	<-b.started
	cancel()
	err := <-errc
	if !errors.Is(err, kernel.ErrAborted) {
		t.Fatalf("Serve returned %v", err)
	}
	if !strings.Contains(out.String(), `"type":"agent_end","outcome":{"status":"aborted"`) {
		t.Errorf("no aborted agent_end:\n%s", out.String())
	}
}

// abort stops a compaction too: the compact command fails, then abort answers.
func TestAbortStopsACompaction(t *testing.T) {
	c := &slowCompactor{started: make(chan struct{})}
	host := &memHost{t: t, compactor: c, scenario: "version: 1\nturns: [{text: hi}]\n"}
	in, feed := io.Pipe()
	out := newSyncBuffer()
	errc := make(chan error, 1)
	go func() { errc <- Serve(context.Background(), host, in, out, Options{}) }()
	io.WriteString(feed, `{"id":"c","type":"compact"}`+"\n")
	<-c.started
	io.WriteString(feed, `{"id":"s","type":"get_state"}`+"\n")
	out.waitFor(`"id":"s"`)
	if !strings.Contains(out.String(), `"isCompacting":true`) {
		t.Errorf("state during compaction:\n%s", out.String())
	}
	io.WriteString(feed, `{"id":"p","type":"prompt","message":"hi"}`+"\n")
	out.waitFor(`"id":"p"`)
	io.WriteString(feed, `{"id":"a","type":"abort"}`+"\n")
	out.waitFor(`"id":"a"`)
	feed.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		`"id":"p","command":"prompt","success":false,"error":"cannot start a run while a compact is in progress`,
		`"id":"c","command":"compact","success":false`,
		`"id":"a","command":"abort","success":true,"data":{"aborted":true}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in:\n%s", want, text)
		}
	}
	if strings.Index(text, `"id":"c"`) > strings.Index(text, `"id":"a"`) {
		t.Errorf("the compaction must end before abort answers:\n%s", text)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// When stdout breaks the server stops with ErrClosed instead of running on unheard.
func TestServeStopsWhenOutputBreaks(t *testing.T) {
	host := &memHost{t: t, scenario: "version: 1\nturns: [{text: hi}]\n"}
	err := Serve(context.Background(), host, strings.NewReader(`{"type":"get_state"}`+"\n"+`{"type":"get_state"}`+"\n"), failingWriter{}, Options{})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve returned %v", err)
	}
}
