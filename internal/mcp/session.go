package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// errEnded is the cause of a session's end when the server closed the connection cleanly.
var errEnded = errors.New("the connection ended")

// maxToolPages bounds the pages of one tools/list, against a server whose cursor never ends.
const maxToolPages = 1000

// transport carries JSON-RPC messages between rein and one server.
type transport interface {
	// send delivers one encoded message. id is the request's id when msg is a request
	// (0 otherwise), so that an answer that fails on the way can fail that request.
	send(ctx context.Context, msg []byte, id int64) error
	// inbox delivers what the server sends; a transport whose connection can end by itself
	// (a process's output) closes it then.
	inbox() <-chan inbound
	// negotiated is told the protocol version initialize agreed on.
	negotiated(version string)
	close() error
}

// inbound is what one line, body or event from the server held — its messages, parsed once
// by the transport — or a failure: of the answer to request id, or (id 0) of the whole
// connection (what could not be parsed is one).
type inbound struct {
	msgs []*message
	id   int64
	err  error
}

// parsed is the inbound of data: its messages, or the error that ends the connection.
// Nothing of data is kept, so the caller may reuse it.
func parsed(data []byte) inbound {
	msgs, err := parseMessages(data)
	if err != nil {
		return inbound{err: err}
	}
	return inbound{msgs: msgs}
}

// answer is what a pending request gets: a result or an error.
type answer struct {
	result json.RawMessage
	err    error
}

// session is one initialized MCP session: requests matched to their answers by id, server
// requests answered, notifications dispatched.
type session struct {
	t             transport
	onListChanged func()

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan answer

	closing   chan struct{} // closed by close
	closeOnce sync.Once
	done      chan struct{} // closed when the connection ended
	err       error         // why; set before done is closed
	init      initializeResult
}

// newSession starts reading t's messages; call initialize next.
func newSession(t transport, onListChanged func()) *session {
	s := &session{t: t, onListChanged: onListChanged, pending: map[int64]chan answer{}, closing: make(chan struct{}), done: make(chan struct{})}
	go s.read()
	return s
}

// initialize runs the handshake: initialize, a version rein accepts, notifications/initialized.
func (s *session) initialize(ctx context.Context, version string) error {
	p := initializeParams{ProtocolVersion: protocolVersion, Capabilities: map[string]any{},
		ClientInfo: implementation{Name: "rein", Version: version}}
	if err := s.request(ctx, methodInitialize, p, &s.init); err != nil {
		return err
	}
	if err := s.init.check(); err != nil {
		return err
	}
	s.t.negotiated(s.init.ProtocolVersion)
	return s.notify(ctx, methodInitialized, map[string]any{})
}

// tools lists every page of the server's tools.
func (s *session) tools(ctx context.Context) ([]*mcpTool, error) {
	var all []*mcpTool
	var p listToolsParams
	seen := map[string]bool{}
	for range maxToolPages {
		var page listToolsResult
		if err := s.request(ctx, methodToolsList, p, &page); err != nil {
			return nil, err
		}
		for _, t := range page.Tools {
			if t == nil || t.Name == "" {
				return nil, fmt.Errorf("%w: tools/list answered a tool without a name", errMalformed)
			}
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		if seen[page.NextCursor] {
			return nil, fmt.Errorf("%w: tools/list answered the cursor %q twice", errMalformed, page.NextCursor)
		}
		seen[page.NextCursor] = true
		p.Cursor = page.NextCursor
	}
	return nil, fmt.Errorf("%w: tools/list went on for more than %d pages", errMalformed, maxToolPages)
}

// callTool calls one tool with args as given (a JSON object, or nothing).
func (s *session) callTool(ctx context.Context, name string, args []byte) (*callToolResult, error) {
	var res callToolResult
	if err := s.request(ctx, methodToolsCall, callToolParams{Name: name, Arguments: rawArgs(args)}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// request sends one request and decodes its result into out. When ctx ends first, the
// server is told with notifications/cancelled (not for initialize, which the protocol
// forbids cancelling).
func (s *session) request(ctx context.Context, method string, params, out any) error {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan answer, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	defer s.forget(id)
	raw := json.RawMessage(strconv.FormatInt(id, 10))
	msg, err := encode(outgoing{ID: raw, Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	if err := s.t.send(ctx, msg, id); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return fmt.Errorf("%s: %w", method, a.err)
		}
		if err := json.Unmarshal(a.result, out); err != nil {
			return fmt.Errorf("%w: the answer to %s: %w", errMalformed, method, err)
		}
		return nil
	case <-ctx.Done():
		if method != methodInitialize {
			go s.cancelled(raw, ctx.Err())
		}
		return ctx.Err()
	case <-s.done:
		return s.err
	}
}

// cancelled tells the server that rein no longer waits for request id.
func (s *session) cancelled(id json.RawMessage, why error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.notify(ctx, methodCancelled, cancelledParams{RequestID: id, Reason: why.Error()})
}

func (s *session) notify(ctx context.Context, method string, params any) error {
	msg, err := encode(outgoing{Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	if err := s.t.send(ctx, msg, 0); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

func (s *session) forget(id int64) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
}

// read dispatches what the server sends until the connection ends; a malformed message
// ends it.
func (s *session) read() {
	err := errEnded
	for {
		var in inbound
		var ok bool
		select {
		case in, ok = <-s.t.inbox():
		case <-s.closing:
		}
		if !ok {
			break
		}
		if in.err != nil {
			if in.id != 0 {
				s.deliver(in.id, answer{err: in.err})
				continue
			}
			err = in.err
			break
		}
		for _, m := range in.msgs {
			s.dispatch(m)
		}
	}
	s.err = err
	close(s.done)
	_ = s.t.close()
}

func (s *session) dispatch(m *message) {
	switch {
	case m.isRequest():
		go s.answerRequest(m)
	case m.isNotification():
		if *m.Method == methodToolsListChanged && s.onListChanged != nil {
			go s.onListChanged()
		}
	default:
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return // not an id rein sent
		}
		a := answer{result: m.Result}
		if m.Error != nil {
			a = answer{err: m.Error}
		}
		s.deliver(id, a)
	}
}

// deliver hands an answer to the request waiting for it; an answer nobody waits for (the
// request was cancelled, or the id is not one rein sent) is dropped.
func (s *session) deliver(id int64, a answer) {
	s.mu.Lock()
	ch := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if ch != nil {
		ch <- a
	}
}

// answerRequest answers a request from the server: ping with an empty result, anything else
// with "method not found" (rein offers no sampling, roots or elicitation).
func (s *session) answerRequest(m *message) {
	o := outgoing{ID: m.ID, Result: map[string]any{}}
	if *m.Method != methodPing {
		o = outgoing{ID: m.ID, Error: &RPCError{Code: codeMethodNotFound, Message: "method not found: rein does not offer " + *m.Method}}
	}
	msg, err := encode(o)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.t.send(ctx, msg, 0)
}

// close ends the connection; what still waits for an answer fails.
func (s *session) close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	err := s.t.close()
	<-s.done
	return err
}

// wait blocks until the connection ended and returns why.
func (s *session) wait() error {
	<-s.done
	return s.err
}
