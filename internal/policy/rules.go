package policy

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/pathrule"
)

// Rules are permission rules as written in settings:
// {"permissions": {"allow": [...], "ask": [...], "deny": [...]}}. See the package
// documentation for the syntax; [New] compiles them.
type Rules struct {
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Built-in tool names the rules know how to look into.
const (
	ToolBash  = "bash"
	ToolRead  = "read"
	ToolWrite = "write"
	ToolEdit  = "edit"
	ToolGrep  = "grep"
	ToolFind  = "find"
	ToolLs    = "ls"
)

// Op is the kind of file access a path rule guards.
type Op int

const (
	// OpRead reads files or lists directories.
	OpRead Op = iota + 1
	// OpWrite creates, changes or removes files.
	OpWrite
)

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

type ruleKind int

const (
	kindTool    ruleKind = iota + 1 // a bare tool name: the whole tool
	kindCommand                     // bash(pattern)
	kindPath                        // read(glob), write(glob), …
)

// Rule is one parsed permission rule.
type Rule struct {
	// Raw is the rule as written.
	Raw string
	// Tool is the tool name, lower-cased.
	Tool string
	// Pattern is the text between the parentheses; empty for a whole-tool rule.
	Pattern string

	kind   ruleKind
	tokens []string      // command rule: word patterns; "**" stands for any number of words
	path   pathrule.Glob // path rule: the glob
}

// ParseRule parses one rule: a tool name ("edit", "bash") for the whole tool, or a tool name
// with a pattern in parentheses ("bash(git push *)", "read(**/.env)"). Only bash and the file
// tools take a pattern. Errors are *[refusal.Error] with [CodeBadRule].
func ParseRule(s string) (Rule, error) {
	raw := s
	s = strings.TrimSpace(s)
	bad := func(format string, args ...any) (Rule, error) {
		return Rule{}, errorf(CodeBadRule, "rule %q: %s; write a tool name (\"edit\") or a tool name with a pattern (\"bash(git push *)\", \"read(**/.env)\")", raw, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return bad("empty rule")
	}
	name, pattern, hasPattern := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if name == "" || !validToolName(name) && !validMCPRule(name) {
		return bad("%q is not a tool name", name)
	}
	r := Rule{Raw: raw, Tool: strings.ToLower(name)}
	if !hasPattern {
		r.kind = kindTool
		return r, nil
	}
	if strings.Contains(name, "*") {
		return bad("an MCP rule with \"*\" takes no pattern")
	}
	if !strings.HasSuffix(pattern, ")") {
		return bad("missing closing parenthesis")
	}
	pattern = strings.TrimSpace(strings.TrimSuffix(pattern, ")"))
	if pattern == "" {
		return bad("empty pattern; write the bare tool name to match every call")
	}
	r.Pattern = pattern
	switch r.Tool {
	case ToolBash:
		toks, err := commandTokens(pattern)
		if err != nil {
			return bad("%v", err)
		}
		if len(toks) == 1 && toks[0] == "**" {
			// bash(*) and bash(**) mean the whole tool.
			r.kind = kindTool
			return r, nil
		}
		r.kind, r.tokens = kindCommand, toks
	case ToolRead, ToolWrite, ToolEdit, ToolGrep, ToolFind, ToolLs:
		g, err := pathrule.Compile(pattern)
		if err != nil {
			return bad("%v", err)
		}
		r.kind, r.path = kindPath, g
	default:
		return bad("only bash and the file tools (read, write, edit, grep, find, ls) take a pattern")
	}
	return r, nil
}

func validToolName(s string) bool {
	for _, c := range s {
		if c != '_' && c != '-' && c != '.' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// commandTokens splits a command pattern into word patterns. Words are separated by
// unescaped white space; a backslash escapes the next character (kept for the word matcher).
// A final "*" and every "**" become "**" (any number of words, including none). The
// legacy suffix ":*" ("npm run:*") means the same as " *".
func commandTokens(p string) ([]string, error) {
	if strings.HasSuffix(p, ":*") && !strings.HasSuffix(p, `\:*`) {
		p = strings.TrimSuffix(p, ":*") + " *"
	}
	var toks []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return nil, fmt.Errorf("pattern ends with a lone backslash")
			}
			cur.WriteByte(c)
			cur.WriteByte(p[i+1])
			i++
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				toks = append(toks, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		toks = append(toks, cur.String())
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty command pattern")
	}
	if toks[len(toks)-1] == "*" {
		toks[len(toks)-1] = "**"
	}
	if toks[0] == "**" && len(toks) > 1 {
		return nil, fmt.Errorf("the command name must not be \"**\"")
	}
	return toks, nil
}

// wordMatch matches one word against a word pattern: "*" matches any run of characters
// (including "/" and none), "?" one character, "\x" the character x; everything else matches
// itself.
func wordMatch(pat, s string) bool {
	// Iterative matcher with single-star backtracking (linear in practice).
	pi, si := 0, 0
	starP, starS := -1, 0
	pr := []rune(pat)
	sr := []rune(s)
	for si < len(sr) {
		if pi < len(pr) {
			switch pr[pi] {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '\\':
				if pi+1 < len(pr) && pr[pi+1] == sr[si] {
					pi += 2
					si++
					continue
				}
			default:
				if pr[pi] == sr[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		pi, si = starP+1, starS
	}
	for pi < len(pr) && pr[pi] == '*' {
		pi++
	}
	return pi == len(pr)
}
