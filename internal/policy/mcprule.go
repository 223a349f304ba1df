package policy

import (
	"path"
	"strings"
)

// mcpPrefix starts the name of every MCP tool (mcp__<server>__<tool>).
const mcpPrefix = "mcp__"

// MCP tool rules, as Claude Code writes them: "mcp__server" and "mcp__server__*" name every
// tool of a server, "mcp__server__tool" one tool, and "*" may stand for any run of
// characters in an MCP rule ("mcp__server__get_*"; "mcp__*" in deny and ask lists only: an
// allow glob must follow a literal "mcp__<server>__").

// validMCPRule reports whether name is an MCP rule that may hold "*".
func validMCPRule(name string) bool {
	return strings.HasPrefix(name, mcpPrefix) && validToolName(strings.ReplaceAll(name, "*", ""))
}

// toolMatches reports whether the whole-tool rule r names the tool called name (both lower
// case).
func (r Rule) toolMatches(name string) bool {
	if r.Tool == name {
		return true
	}
	if !strings.HasPrefix(r.Tool, mcpPrefix) || !strings.HasPrefix(name, mcpPrefix) {
		return false
	}
	if !strings.Contains(r.Tool, "*") {
		server := strings.TrimPrefix(r.Tool, mcpPrefix)
		return !strings.Contains(server, "__") && strings.HasPrefix(name, r.Tool+"__")
	}
	ok, _ := path.Match(r.Tool, name)
	return ok
}

// broadMCPAllow reports whether r is an allow rule whose glob reaches into the server part
// of MCP tool names (it would allow tools of servers nobody named).
func (r Rule) broadMCPAllow() bool {
	if !strings.HasPrefix(r.Tool, mcpPrefix) || !strings.Contains(r.Tool, "*") {
		return false
	}
	server, _, found := strings.Cut(strings.TrimPrefix(r.Tool, mcpPrefix), "__")
	return !found || strings.Contains(server, "*")
}
