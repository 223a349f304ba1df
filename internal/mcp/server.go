package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/proc"
)

// States of a server, as `rein mcp list` shows them.
const (
	StateDisabled  = "disabled"
	StateConnected = "connected"
	StateFailed    = "failed"
	StateCrashed   = "crashed" // it ended; the next call starts it again
	StateClosed    = "closed"
)

// maxRestarts bounds how often a crashed server is started again in one Manager's life.
const maxRestarts = 3

// stderrTail is how much of a stdio server's standard error is kept for messages.
const stderrTail = 4 << 10

// ErrServer is wrapped by the errors of a server that cannot be reached.
var ErrServer = errors.New("MCP server unavailable")

// server is one configured server and its connection, if any.
type server struct {
	cfg Server
	m   *Manager

	mu           sync.Mutex
	conn         *conn
	state        string
	err          error
	tools        []*mcpTool
	instructions string
	restarts     int
}

// conn is one live session with a server.
type conn struct {
	session *session
	proc    *proc.Process // nil for HTTP
	stderr  *proc.Tail
	dead    chan struct{} // closed once the session ended and the server's state says so
}

// connect starts (stdio) or reaches (HTTP) the server, initializes the session and lists its
// tools, within the manager's start timeout.
func (s *server) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.m.opts.StartTimeout)
	defer cancel()
	c, err := s.open(ctx)
	if err != nil {
		s.setFailed(err)
		return err
	}
	tools, err := c.session.tools(ctx)
	if err != nil {
		err = s.describe(c, fmt.Errorf("listing its tools: %w", err))
		c.close()
		s.setFailed(err)
		return err
	}
	s.mu.Lock()
	s.conn, s.state, s.err, s.tools = c, StateConnected, nil, tools
	s.instructions = c.session.init.Instructions
	s.mu.Unlock()
	go func() {
		why := c.session.wait()
		s.mu.Lock()
		if s.conn == c && s.state == StateConnected {
			s.state, s.err = StateCrashed, s.describe(c, why)
		}
		s.mu.Unlock()
		close(c.dead)
	}()
	return nil
}

func (s *server) setFailed(err error) {
	s.mu.Lock()
	s.state, s.err = StateFailed, err
	s.mu.Unlock()
}

// open makes the transport and initializes a session over it.
func (s *server) open(ctx context.Context) (*conn, error) {
	c := &conn{dead: make(chan struct{})}
	var t transport
	switch {
	case s.m.opts.Transport != nil:
		r, w := s.m.opts.Transport(s.cfg)
		t = newStdioTransport(r, w)
	case s.cfg.Type == TypeHTTP:
		t = newHTTPTransport(s.cfg.URL, s.m.httpClient(s.cfg.Headers))
	default:
		c.stderr = proc.NewTail(stderrTail)
		p, err := proc.Start(s.m.life, proc.Spec{
			Path: s.cfg.Command, Args: append([]string{s.cfg.Command}, s.cfg.Args...),
			Dir: s.m.opts.Dir, Env: s.m.env(s.cfg.Env), Stderr: c.stderr,
			Contain: true, Journal: s.m.opts.Journal,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrServer, s.cfg.Name, err)
		}
		c.proc = p
		t = newStdioTransport(p.Stdout, p.Stdin)
	}
	c.session = newSession(t, func() { s.relist(c) })
	if err := c.session.initialize(ctx, s.m.opts.Version); err != nil {
		err = s.describe(c, fmt.Errorf("initializing: %w", err))
		c.close()
		return nil, err
	}
	return c, nil
}

// relist fetches the tool list again after a tools/list_changed notification; a failed
// refresh keeps the old list.
func (s *server) relist(c *conn) {
	ctx, cancel := context.WithTimeout(s.m.life, s.m.opts.StartTimeout)
	defer cancel()
	tools, err := c.session.tools(ctx)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.conn == c {
		s.tools = tools
	}
	s.mu.Unlock()
}

// describe adds what a stdio server left on its standard error, and how it ended, to err.
func (s *server) describe(c *conn, err error) error {
	var extra []string
	if c.proc != nil {
		select {
		case <-c.proc.Done():
			extra = append(extra, "the server process "+c.proc.Result().String())
		default:
		}
	}
	if c.stderr != nil {
		if tail := strings.TrimSpace(string(c.stderr.Bytes())); tail != "" {
			if lines := strings.Split(tail, "\n"); len(lines) > 5 {
				tail = strings.Join(lines[len(lines)-5:], "\n")
			}
			extra = append(extra, "its last standard error: "+tail)
		}
	}
	if len(extra) == 0 {
		return fmt.Errorf("%w: %s: %w", ErrServer, s.cfg.Name, err)
	}
	return fmt.Errorf("%w: %s: %w (%s)", ErrServer, s.cfg.Name, err, strings.Join(extra, "; "))
}

// close ends the session and the process.
func (c *conn) close() {
	if c.session != nil {
		_ = c.session.close()
	}
	if c.proc != nil {
		c.proc.Stop(2 * time.Second)
	}
}

// live returns the server's session, starting the server again if it crashed since (at most
// maxRestarts times).
func (s *server) live(ctx context.Context) (*conn, error) {
	if s.cfg.Problem != nil {
		return nil, s.cfg.Problem // it cannot be started as configured
	}
	s.mu.Lock()
	c, state := s.conn, s.state
	s.mu.Unlock()
	switch state {
	case StateConnected:
		// The session's own end decides, not c.dead, which follows once the state is
		// updated: a call on an ended session would be reported as ended during it.
		select {
		case <-c.session.done:
		default:
			return c, nil
		}
	case StateDisabled:
		return nil, fmt.Errorf("%w: %s is disabled in the settings", ErrServer, s.cfg.Name)
	case StateClosed:
		return nil, fmt.Errorf("%w: %s was closed", ErrServer, s.cfg.Name)
	}
	s.mu.Lock()
	if s.restarts >= maxRestarts {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %s ended %d times and is not started again in this run", ErrServer, s.cfg.Name, s.restarts+1)
	}
	s.restarts++
	old := s.conn
	s.conn = nil
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn, nil
}

// call calls one tool of the server. A connection that ends during the call is one error
// naming what ended it; the next call starts the server again.
func (s *server) call(ctx context.Context, name string, args []byte) (*callToolResult, error) {
	c, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	if d := s.m.opts.CallTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	res, err := c.session.callTool(ctx, name, args)
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("calling %s on MCP server %s: %w", name, s.cfg.Name, ctx.Err())
	}
	select {
	case <-c.dead:
	case <-time.After(100 * time.Millisecond):
	}
	select {
	case <-c.dead:
		return nil, s.describe(c, fmt.Errorf("the server ended during the call of %s, whose outcome is unknown (it is started again on the next call): %w", name, err))
	default:
	}
	return nil, fmt.Errorf("calling %s on MCP server %s: %w", name, s.cfg.Name, err)
}

// headerTransport adds configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}
