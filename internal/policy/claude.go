package policy

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ClaudeBase says what a Claude Code permission rule's paths are relative to: rules from a
// project's .claude/ files anchor "/path" at the project root, rules from ~/.claude/settings.json
// at ~/.claude (Claude Code's reading).
type ClaudeBase struct {
	// Root is the directory a rule's "/path" is relative to.
	Root string
}

// claudeTools maps Claude Code's tool names to rein's. A whole-tool rule on a name covers
// every rein tool listed; a path rule becomes a path rule on the first. Edit covers both
// writing tools and Read every reading tool, as in Claude Code.
func claudeTools(name string) ([]string, bool) {
	switch name {
	case "Bash":
		return []string{ToolBash}, true
	case "Read":
		return []string{ToolRead, ToolGrep, ToolFind, ToolLs}, true
	case "Edit":
		return []string{ToolEdit, ToolWrite}, true
	case "Write":
		return []string{ToolWrite}, true
	case "MultiEdit":
		return []string{ToolEdit}, true
	case "Grep":
		return []string{ToolGrep}, true
	case "Glob":
		return []string{ToolFind}, true
	case "LS":
		return []string{ToolLs}, true
	}
	return nil, false
}

// claudeOnly are Claude Code tools rein has no equivalent of.
var claudeOnly = []string{"WebFetch", "WebSearch", "Agent", "Task", "NotebookEdit", "NotebookRead", "TodoWrite",
	"AskUserQuestion", "ExitPlanMode", "EnterPlanMode", "KillShell", "BashOutput", "SlashCommand", "Skill",
	"PowerShell", "LSP", "ListMcpResourcesTool", "ReadMcpResourceTool", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet"}

// FromClaude maps one Claude Code permission rule of list ("allow", "ask", "deny") onto
// rein's rules. It returns the rein rules (each one parses with [ParseRule]) or, for a rule
// rein has no equivalent of, none and a reason the caller reports as a warning.
//
// The mapping: Bash(cmd) → bash(cmd) (a "*" inside a word, "ls*", also matches further
// words, since Claude Code's "*" spans spaces; "git push:*" is rein's legacy form too);
// Read(p) → read(p), Edit(p) → edit(p), Write(p) → write(p), MultiEdit(p) → edit(p),
// Grep(p) → grep(p), Glob(p) → find(p), LS(p) → ls(p); bare names cover what Claude Code's
// cover (Read: read, grep, find, ls; Edit: edit, write). Paths follow Claude Code's
// gitignore-style reading: "//abs" is absolute, "/p" is relative to base.Root, "~/p" the
// home directory, "./p" the working directory, and a pattern without "/" — or, for deny and
// ask, any relative one — matches at any depth. mcp__server__tool is kept as it is. Tools
// rein lacks (WebFetch, Agent…), parameter rules (Agent(model:opus)) and anything that does
// not parse come back with a reason.
func FromClaude(rule, list string, base ClaudeBase) ([]string, string) {
	s := strings.TrimSpace(rule)
	name, pattern, hasPattern := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if hasPattern {
		p, ok := strings.CutSuffix(strings.TrimSpace(pattern), ")")
		if !ok {
			return nil, "missing closing parenthesis"
		}
		pattern = strings.TrimSpace(p)
	}
	for _, t := range claudeOnly {
		if name == t {
			return nil, fmt.Sprintf("rein has no %s tool", name)
		}
	}
	tools, ok := claudeTools(name)
	if !ok {
		if _, err := ParseRule(s); err == nil {
			return []string{s}, "" // mcp__server__tool, or a rein tool name
		}
		return nil, "not a rule rein knows (no equivalent tool or syntax)"
	}
	if !hasPattern || pattern == "*" || pattern == "**" {
		return append([]string(nil), tools...), ""
	}
	if name != "Bash" && strings.Contains(pattern, ":") && !strings.ContainsAny(pattern, "/*") {
		return nil, "parameter rules (Tool(param:value)) have no equivalent in rein"
	}
	var out string
	if name == "Bash" {
		out = ToolBash + "(" + claudeCommand(pattern) + ")"
	} else {
		out = tools[0] + "(" + claudePath(pattern, list, base) + ")"
	}
	if _, err := ParseRule(out); err != nil {
		return nil, "maps to " + out + ", which rein cannot use: " + err.Error()
	}
	return []string{out}, ""
}

// claudeCommand rewrites a Claude Code command pattern in rein's word syntax: a word with a
// "*" at its end (not a whole "*") also matches any further words ("ls*" matches "lsof" and
// "ls -la"), and a "*" word in the middle any number of words.
func claudeCommand(p string) string {
	if strings.HasSuffix(p, ":*") {
		return p
	}
	words := strings.Fields(p)
	for i, w := range words {
		switch {
		case w == "*" && i < len(words)-1:
			words[i] = "**"
		case i == len(words)-1 && w != "*" && strings.HasSuffix(w, "*") && !strings.HasSuffix(w, `\*`):
			words = append(words, "**")
		}
	}
	return strings.Join(words, " ")
}

// claudePath rewrites a Claude Code path pattern as a rein glob (see FromClaude).
func claudePath(p, list string, base ClaudeBase) string {
	switch {
	case strings.HasPrefix(p, "//"):
		return p[1:]
	case strings.HasPrefix(p, "/"):
		return filepath.ToSlash(filepath.Join(base.Root, p[1:])) + trailing(p)
	case strings.HasPrefix(p, "~/"), strings.HasPrefix(p, "./"), strings.HasPrefix(p, "**"):
		return p
	case !strings.Contains(strings.TrimSuffix(p, "/"), "/") || list != "allow":
		return "**/" + p
	}
	return p
}

func trailing(p string) string {
	if strings.HasSuffix(p, "/") {
		return "/"
	}
	return ""
}
