package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/proc"
)

// Default timeouts; MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds) override them.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 10 * time.Minute
)

// Options configure a [Manager].
type Options struct {
	// Servers are the configured servers (see [Resolve]); disabled ones are listed, not started.
	Servers []Server
	// Dir is the working directory of stdio servers (the project root).
	Dir string
	// Environ is the environment stdio servers inherit before their own "env"; variables
	// whose names match StripEnv (path.Match patterns, case-insensitive) are left out of it.
	Environ  []string
	StripEnv []string
	// SetEnv are variables set for every stdio server (the settings' "env"), over Environ
	// and under a server's own "env"; StripEnv does not remove them (they are set on purpose).
	SetEnv map[string]string
	// Journal records the servers' processes, so that a later rein ends what a dead one left.
	Journal *proc.Journal
	// HTTPClient reaches HTTP servers; nil means http.DefaultClient.
	HTTPClient *http.Client
	// StartTimeout bounds starting a server and listing its tools; CallTimeout one call.
	StartTimeout, CallTimeout time.Duration
	// Version is rein's, sent as the client version.
	Version string
	// Transport, when set, connects to every server instead of its type: the server's
	// output to read and its input to write, in the stdio transport's framing (a test seam
	// for in-memory servers).
	Transport func(Server) (io.ReadCloser, io.WriteCloser)
}

// Manager holds the connections to the configured servers for one run. It is safe for
// concurrent use; [Manager.Close] ends every server.
type Manager struct {
	opts    Options
	life    context.Context
	end     context.CancelFunc
	servers []*server
	byName  map[string]*server
}

// TimeoutsFromEnv reads MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds), as Claude Code does.
func TimeoutsFromEnv(getenv func(string) string) (start, call time.Duration) {
	start, call = DefaultStartTimeout, DefaultCallTimeout
	ms := func(name string, d *time.Duration) {
		var n int64
		if _, err := fmt.Sscanf(getenv(name), "%d", &n); err == nil && n > 0 {
			*d = time.Duration(n) * time.Millisecond
		}
	}
	ms("MCP_TIMEOUT", &start)
	ms("MCP_TOOL_TIMEOUT", &call)
	return start, call
}

// Open starts every enabled server (concurrently) and lists its tools. A server that cannot
// be started is recorded as failed ([Manager.Servers] says why); Open itself does not fail.
func Open(ctx context.Context, o Options) *Manager {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	m := &Manager{opts: o, life: life, end: end, byName: map[string]*server{}}
	var wg sync.WaitGroup
	for _, cfg := range o.Servers {
		s := &server{cfg: cfg, m: m, state: StateDisabled}
		m.servers = append(m.servers, s)
		m.byName[cfg.Name] = s
		if cfg.Disabled {
			continue
		}
		if cfg.Problem != nil {
			s.state, s.err = StateFailed, cfg.Problem
			continue
		}
		wg.Go(func() { _ = s.connect(ctx) })
	}
	wg.Wait()
	return m
}

// Close ends every server: stdio servers get their input closed, then are killed after a
// grace period.
func (m *Manager) Close() error {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		s.mu.Lock()
		c := s.conn
		s.conn = nil
		if s.state != StateDisabled {
			s.state = StateClosed
		}
		s.mu.Unlock()
		if c != nil {
			wg.Go(c.close)
		}
	}
	wg.Wait()
	m.end()
	return nil
}

// env is a stdio server's environment: the inherited one without the stripped names, then
// the settings' variables (SetEnv), then the entry's own variables, which win.
func (m *Manager) env(own map[string]string) []string {
	var out []string
	for _, kv := range m.opts.Environ {
		name, _, _ := strings.Cut(kv, "=")
		_, set := own[name]
		_, shared := m.opts.SetEnv[name]
		if set || shared || stripped(name, m.opts.StripEnv) {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(mapsKeys(m.opts.SetEnv)) {
		if _, set := own[k]; !set {
			out = append(out, k+"="+m.opts.SetEnv[k])
		}
	}
	for _, k := range slices.Sorted(mapsKeys(own)) {
		out = append(out, k+"="+own[k])
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func stripped(name string, patterns []string) bool {
	up := strings.ToUpper(name)
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToUpper(p), up); ok {
			return true
		}
	}
	return false
}

func (m *Manager) httpClient(headers map[string]string) *http.Client {
	base := m.opts.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	if len(headers) == 0 {
		return base
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = headerTransport{base: rt, headers: headers}
	return &c
}

// ServerInfo is what `rein mcp list` shows of a server.
type ServerInfo struct {
	Name, Source, Type string
	// Target is the command line (stdio) or the URL without credentials (HTTP).
	Target string
	State  string
	Err    error
	// Instructions is the server's initialize instructions (untrusted text).
	Instructions string
	Tools        []ToolInfo
}

// ToolInfo describes one tool of a server.
type ToolInfo struct {
	// Name is rein's name for it, MCPName the server's.
	Name, MCPName, Description string
	ReadOnly                   bool
}

// Servers describes every configured server, in name order.
func (m *Manager) Servers() []ServerInfo {
	var out []ServerInfo
	for _, s := range m.servers {
		s.mu.Lock()
		info := ServerInfo{Name: s.cfg.Name, Source: s.cfg.Source, Type: s.cfg.Type, State: s.state, Err: s.err, Instructions: s.instructions}
		for _, t := range s.tools {
			info.Tools = append(info.Tools, ToolInfo{Name: ToolName(s.cfg.Name, t.Name), MCPName: t.Name, Description: t.Description,
				ReadOnly: t.readOnly()})
		}
		s.mu.Unlock()
		if info.Type == "" {
			info.Type = TypeStdio
		}
		if info.Type == TypeHTTP {
			info.Target = redactURL(s.cfg.URL)
		} else {
			info.Target = strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
		}
		out = append(out, info)
	}
	return out
}

// Call calls the tool named tool (the server's own name) on server with args (a JSON object),
// for debugging (`rein mcp call`): no validation, permission rules or hooks apply.
func (m *Manager) Call(ctx context.Context, serverName, tool string, args json.RawMessage) (Output, error) {
	s, ok := m.byName[serverName]
	if !ok {
		var names []string
		for _, s := range m.servers {
			names = append(names, s.cfg.Name)
		}
		return Output{}, fmt.Errorf("%w: no server is named %q (configured: %s)", ErrServer, serverName, strings.Join(names, ", "))
	}
	res, err := s.call(ctx, tool, args)
	if err != nil {
		return Output{}, err
	}
	return convert(res), nil
}

// rawArgs is a call's arguments as given, nil (left out of the request) when there are none.
func rawArgs(args []byte) json.RawMessage {
	if len(strings.TrimSpace(string(args))) == 0 {
		return nil
	}
	return json.RawMessage(args)
}

// BaseEnviron is os.Environ, for Options.Environ.
func BaseEnviron() []string { return os.Environ() }
