package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/tool"
)

// maxDescription bounds a tool description a server sends (as Claude Code does).
const maxDescription = 2048

// Tool is one MCP tool as a rein tool: the kernel validates its arguments against the
// server's input schema, the permission rules and hooks see its name (mcp__<server>__<tool>),
// and its calls are recorded as intents like any tool's.
type Tool struct {
	srv     *server
	mcpName string
	spec    tool.Spec
}

// Spec implements tool.Tool.
func (t *Tool) Spec() tool.Spec { return t.spec }

// Server and MCPName name the tool's server and the server's name for it.
func (t *Tool) Server() string  { return t.srv.cfg.Name }
func (t *Tool) MCPName() string { return t.mcpName }

// Run implements tool.Tool: it calls the tool on its server (starting the server again if it
// crashed since the last call). A tool error the server reports (isError) is an error result
// with the server's content; a server that ends during the call is one error naming why.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	res, err := t.srv.call(ctx, t.mcpName, call.Args)
	if err != nil {
		return tool.Result{}, err
	}
	out := convert(res)
	return tool.Result{Content: out.Content, IsError: out.IsError, Details: out.Details}, nil
}

// Tools returns the tools of every connected server as rein tools, in server then tool
// order. A tool whose name, after sanitising, equals another's (ignoring case, as the
// permission rules do) is refused with the other, and one whose input schema rein cannot
// use is refused: each refusal is a problem in the second result, naming both tools.
func (m *Manager) Tools() ([]*Tool, []string) {
	var all []*Tool
	var problems []string
	for _, s := range m.servers {
		s.mu.Lock()
		tools := slices.Clone(s.tools)
		s.mu.Unlock()
		for _, mt := range tools {
			t, err := newTool(s, mt)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			all = append(all, t)
		}
	}
	byName := map[string][]*Tool{}
	for _, t := range all {
		k := strings.ToLower(t.spec.Name)
		byName[k] = append(byName[k], t)
	}
	var out []*Tool
	for _, t := range all {
		same := byName[strings.ToLower(t.spec.Name)]
		if len(same) == 1 {
			out = append(out, t)
			continue
		}
		if same[0] != t {
			continue
		}
		var who []string
		for _, o := range same {
			who = append(who, fmt.Sprintf("%q of server %s", o.mcpName, o.srv.cfg.Name))
		}
		problems = append(problems, fmt.Sprintf("MCP tools %s all become %s (names are reduced to letters, digits, '_' and '-', at most %d characters, compared without case): none of them is offered; rename a server in the settings to tell them apart",
			strings.Join(who, ", "), t.spec.Name, MaxNameLen))
	}
	return out, problems
}

func newTool(s *server, mt *mcpTool) (*Tool, error) {
	name := ToolName(s.cfg.Name, mt.Name)
	schema := normalSchema(mt.InputSchema)
	desc := mt.Description
	if mt.Title != "" && !strings.Contains(desc, mt.Title) {
		desc = mt.Title + ". " + desc
	}
	if len(desc) > maxDescription {
		desc = desc[:maxDescription] + "…"
	}
	readOnly := mt.readOnly()
	spec := tool.Spec{Name: name, Description: fmt.Sprintf("%s\n\n(MCP tool %q of server %s)", strings.TrimSpace(desc), mt.Name, s.cfg.Name),
		Schema: schema, Sequential: !readOnly, Replay: tool.ReplayNever}
	if readOnly {
		spec.Replay = tool.ReplaySafe
	}
	if _, err := tool.Validate(spec, "{}"); err != nil {
		if _, refused := err.(*tool.ValidationError); !refused {
			return nil, fmt.Errorf("MCP tool %q of server %s is not offered: its input schema cannot be used: %w", mt.Name, s.cfg.Name, err)
		}
	}
	return &Tool{srv: s, mcpName: mt.Name, spec: spec}, nil
}

// normalSchema is a tool's input schema re-encoded compact with sorted keys (the same bytes
// in every request whatever spacing the server used); a missing or unreadable one is an
// object schema without properties.
func normalSchema(raw json.RawMessage) json.RawMessage {
	if b, ok := compactSorted(raw); ok {
		return b
	}
	return json.RawMessage(`{"type":"object"}`)
}

// compactSorted is raw re-encoded compact with its object keys sorted; false when raw is
// missing, null or no JSON. (A value decoded from JSON always encodes again.)
func compactSorted(raw json.RawMessage) (json.RawMessage, bool) {
	var v any
	if isNull(raw) || json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}
