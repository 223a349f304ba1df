package command

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ifRule is a hook's "if": one permission rule in Claude Code's syntax, "Tool" or
// "Tool(pattern)", that a tool call must also match for the hook to run.
type ifRule struct {
	tool string
	// pattern matches the command (Bash) or the file path (file tools); nil matches all.
	pattern *regexp.Regexp
}

// parseIf reads a hook's "if". The pattern is a glob: "*" matches any run of characters
// (spaces and "/" included), the legacy suffix ":*" means " *" and also matches the bare
// prefix.
func parseIf(s string) (ifRule, error) {
	name, pat, has := strings.Cut(strings.TrimSpace(s), "(")
	r := ifRule{tool: strings.TrimSpace(name)}
	if r.tool == "" || strings.ContainsAny(r.tool, " )") {
		return r, fmt.Errorf("%q is not a permission rule (\"Bash(git *)\", \"Edit(*.ts)\")", s)
	}
	if !has {
		return r, nil
	}
	pat, ok := strings.CutSuffix(pat, ")")
	if !ok || strings.TrimSpace(pat) == "" {
		return r, fmt.Errorf("%q is not a permission rule (\"Bash(git *)\", \"Edit(*.ts)\")", s)
	}
	pat = strings.TrimSpace(pat)
	expr := ""
	if p, legacy := strings.CutSuffix(pat, ":*"); legacy {
		expr = globExpr(p) + "(?: .*)?"
	} else {
		expr = globExpr(pat)
	}
	re, err := regexp.Compile("^" + expr + "$")
	if err != nil {
		return r, err
	}
	r.pattern = re
	return r, nil
}

func globExpr(p string) string {
	parts := strings.Split(p, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return strings.Join(parts, ".*")
}

// matches reports whether a call of tool (Claude Code's name) with input (Claude Code's
// tool_input) matches the rule. Edit covers Edit, MultiEdit and Write; Read covers Read,
// Grep, Glob and LS, as in Claude Code. A file pattern is tried on the path relative to cwd,
// the absolute path and the base name.
func (r ifRule) matches(tool string, input json.RawMessage, cwd string) bool {
	covers := map[string][]string{"Edit": {"Edit", "MultiEdit", "Write"}, "Read": {"Read", "Grep", "Glob", "LS"}}[r.tool]
	if r.tool != tool && !slices.Contains(covers, tool) {
		return false
	}
	if r.pattern == nil {
		return true
	}
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	if tool == "Bash" {
		c, _ := in["command"].(string)
		return r.pattern.MatchString(strings.TrimSpace(c))
	}
	p, _ := in["file_path"].(string)
	if p == "" {
		p, _ = in["path"].(string)
	}
	if p == "" {
		return false
	}
	cands := []string{p, filepath.Base(p)}
	if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
		cands = append(cands, rel, "./"+rel)
	}
	for _, c := range cands {
		if r.pattern.MatchString(c) {
			return true
		}
	}
	return false
}
