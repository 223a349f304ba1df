package mcp

import (
	"errors"
	"fmt"
	"github.com/reinhq/rein/internal/lazyre"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/strictjson"
)

// ProjectFile is the project's MCP server file, at the project root (Claude Code's shape).
const ProjectFile = ".mcp.json"

// maxFileBytes bounds a .mcp.json file.
const maxFileBytes = 1 << 20

// Transport types of a server entry.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
)

// Server is one entry of "mcpServers", in Claude Code's shape: a stdio server has a command
// (type "stdio" or none), an HTTP server type "http" and a url (streamable HTTP).
type Server struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled keeps the server configured but not started.
	Disabled bool `json:"disabled,omitempty"`

	// Name and Source (the file that configured it) are filled in by rein.
	Name   string `json:"-"`
	Source string `json:"-"`
	// Problem, when set, says why the server cannot be started as configured (see
	// [Expand]): [Open] lists it as failed with this error and does not start it.
	Problem error `json:"-"`
}

// Settings are the "mcp" key of rein's settings files.
type Settings struct {
	// Disabled names servers (from any file, .mcp.json included) that are not started.
	Disabled []string `json:"disabled,omitempty"`
	// Instructions shows the servers' initialize instructions to the model (global only:
	// they are server-authored text).
	Instructions bool `json:"instructions,omitempty"`
	// SearchThreshold: with more MCP tools than this, the model is offered one search tool
	// and loads schemas on demand (global only). nil means [DefaultSearchThreshold].
	SearchThreshold *int `json:"searchThreshold,omitempty"`
}

// DefaultSearchThreshold is the number of MCP tools above which their schemas are loaded on
// demand through the search tool.
const DefaultSearchThreshold = 40

// Threshold returns the search threshold with the default filled in.
func (s *Settings) Threshold() int {
	if s == nil || s.SearchThreshold == nil {
		return DefaultSearchThreshold
	}
	return *s.SearchThreshold
}

// serverName is what a configured server may be called: it becomes part of tool names.
var serverName = lazyre.Regexp{Expr: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$`}

// CheckSettings checks the "mcpServers" and "mcp" keys of a rein settings file; global says
// whether it is $REIN_HOME's. Errors name the key.
func CheckSettings(servers map[string]Server, s *Settings, global bool) error {
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if err := checkServer(name, servers[name]); err != nil {
			return fmt.Errorf("mcpServers.%s: %w", name, err)
		}
	}
	if s == nil {
		return nil
	}
	if !global && (s.Instructions || s.SearchThreshold != nil) {
		return fmt.Errorf("mcp: instructions and searchThreshold may only be set in $REIN_HOME/settings.json (a project's servers cannot ask for their own text to reach the model)")
	}
	if s.SearchThreshold != nil && *s.SearchThreshold < 0 {
		return fmt.Errorf("mcp.searchThreshold: %d is negative; use 0 to always load schemas on demand", *s.SearchThreshold)
	}
	for i, n := range s.Disabled {
		if !serverName.Compiled().MatchString(n) {
			return fmt.Errorf("mcp.disabled[%d]: %q is not a server name", i, n)
		}
	}
	return nil
}

func checkServer(name string, s Server) error {
	if !serverName.Compiled().MatchString(name) || strings.Contains(name, "__") {
		return fmt.Errorf("%q is not a usable server name: use 1-48 letters, digits, '_', '-' or '.', starting with a letter or digit, without \"__\" (it becomes part of the tool names mcp__<server>__<tool>)", name)
	}
	switch s.Type {
	case "", TypeStdio:
		if s.URL != "" && s.Type == "" {
			return errors.New(`a "url" needs "type": "http" (streamable HTTP)`)
		}
		if strings.TrimSpace(s.Command) == "" {
			return errors.New(`a stdio server needs a "command"`)
		}
		if s.URL != "" || len(s.Headers) > 0 {
			return errors.New(`"url" and "headers" belong to "type": "http" servers`)
		}
	case TypeHTTP:
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
			return errors.New(`"command", "args" and "env" belong to stdio servers`)
		}
		if s.URL == "" {
			return errors.New(`an http server needs a "url"`)
		}
	case "sse", "ws":
		return fmt.Errorf("type %q is not supported: rein speaks stdio and streamable HTTP (\"type\": \"http\")", s.Type)
	default:
		return fmt.Errorf("type %q is not a server type; use \"stdio\" or \"http\"", s.Type)
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env: %q is not a variable name", k)
		}
	}
	return nil
}

// Merge lays the servers and settings of a later (more specific) file over earlier ones: a
// server named again is replaced whole, disabled lists concatenate, and instructions and the
// threshold come from the global file only (CheckSettings refuses them elsewhere).
func Merge(servers map[string]Server, s *Settings, later map[string]Server, ls *Settings) (map[string]Server, *Settings) {
	out := maps.Clone(servers)
	if out == nil && len(later) > 0 {
		out = map[string]Server{}
	}
	maps.Copy(out, later)
	if ls == nil {
		return out, s
	}
	merged := Settings{}
	if s != nil {
		merged = *s
	}
	merged.Disabled = append(slices.Clone(merged.Disabled), ls.Disabled...)
	return out, &merged
}

// Label records where each server was configured.
func Label(servers map[string]Server, source string) {
	for name, s := range servers {
		s.Name, s.Source = name, source
		servers[name] = s
	}
}

// ReadProjectFile reads the .mcp.json of a project root (Claude Code's file): a missing file
// is no servers. It is parsed strictly (one object, valid UTF-8, no duplicate keys); keys
// rein does not use are named in warnings and ignored, since the file is shared with other
// tools. A server entry rein cannot use is an error naming it.
func ReadProjectFile(root string) (servers map[string]Server, warnings []string, err error) {
	path := filepath.Join(root, ProjectFile)
	bad := func(format string, args ...any) (map[string]Server, []string, error) {
		return nil, nil, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return bad("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	tree, err := (strictjson.Options{MaxDocumentBytes: maxFileBytes}).Decode(string(data))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return bad(`expected an object {"mcpServers": {...}}`)
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "mcpServers" {
			warnings = append(warnings, fmt.Sprintf("%s: key %q is not used by rein and was ignored", path, k))
		}
	}
	entries, ok := top["mcpServers"].(map[string]any)
	if !ok && top["mcpServers"] != nil {
		return bad(`"mcpServers" must be an object of server entries`)
	}
	servers = map[string]Server{}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		s, warn, err := decodeEntry(entries[name])
		if err != nil {
			return bad("mcpServers.%s: %v", name, err)
		}
		for _, w := range warn {
			warnings = append(warnings, fmt.Sprintf("%s: mcpServers.%s: %s", path, name, w))
		}
		if err := checkServer(name, s); err != nil {
			return bad("mcpServers.%s: %v", name, err)
		}
		servers[name] = s
	}
	Label(servers, path)
	return servers, warnings, nil
}

// entryKeys are the keys of a server entry rein uses.
var entryKeys = []string{"type", "command", "args", "env", "url", "headers", "disabled"}

// decodeEntry decodes one .mcp.json entry: the keys rein uses strictly, the others reported.
func decodeEntry(v any) (Server, []string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Server{}, nil, errors.New("a server entry must be an object")
	}
	var warn []string
	used := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if slices.Contains(entryKeys, k) {
			used[k] = obj[k]
		} else {
			warn = append(warn, fmt.Sprintf("key %q is not used by rein and was ignored", k))
		}
	}
	b, err := jsonMarshal(used)
	if err != nil {
		return Server{}, nil, err
	}
	var s Server
	if err := strictjson.Unmarshal(b, &s); err != nil {
		return Server{}, nil, err
	}
	return s, warn, nil
}

// Resolve returns the servers to start, in name order, with disabled ones marked Disabled
// (by their entry or by s.Disabled).
func Resolve(servers map[string]Server, s *Settings) []Server {
	var out []Server
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		srv := servers[name]
		srv.Name = name
		if s != nil && slices.Contains(s.Disabled, name) {
			srv.Disabled = true
		}
		out = append(out, srv)
	}
	return out
}

// redactURL shows a server URL without credentials or query.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable url)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
