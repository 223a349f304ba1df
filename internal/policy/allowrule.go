package policy

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/internal/pathrule"
)

// AllowRuleFor is the narrowest rule that names one call an ask rule held, as the
// interactive UI's "always allow" writes it: bash(WORDS) for the simple command part (each
// word as the shell sees it after quote removal, its glob characters escaped), TOOL(PATH)
// for a file tool's path (the glob characters escaped), and the bare tool name for any
// other tool. The result always parses with [ParseRule].
func AllowRuleFor(tool, part string) string {
	name := strings.ToLower(tool)
	switch name {
	case ToolBash:
		if words := commandWords(part); len(words) > 0 {
			return "bash(" + strings.Join(words, " ") + ")"
		}
	case ToolRead, ToolWrite, ToolEdit, ToolGrep, ToolFind, ToolLs:
		if p := strings.TrimSpace(part); p != "" {
			return name + "(" + pathrule.EscapeGlob(p) + ")"
		}
	}
	return name
}

// commandWords splits one simple command into its words, each escaped for a command
// pattern. A word whose value is only known when the line runs ($VAR, $(cmd)) keeps its
// source text: such a rule names the call, and the rules never let it approve more.
func commandWords(part string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(part), "")
	if err != nil || len(f.Stmts) != 1 {
		return escapedFields(part)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 {
		return escapedFields(part)
	}
	var out []string
	for _, w := range call.Args {
		text, err := expand.Literal(nil, w)
		if err != nil || !literalWord(w) {
			text = part[w.Pos().Offset():w.End().Offset()]
		}
		out = append(out, escapeWord(text))
	}
	return out
}

// literalWord reports whether w holds only literal text and quotes.
func literalWord(w *syntax.Word) bool {
	lit := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob, *syntax.BraceExp:
			lit = false
		}
		return lit
	})
	return lit
}

func escapedFields(s string) []string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = escapeWord(w)
	}
	return words
}

// escapeWord quotes what a command pattern word would read as a glob or a separator.
func escapeWord(w string) string {
	var b strings.Builder
	for _, c := range w {
		switch c {
		case '\\', '*', '?', ' ', '\t', '\n', '(', ')':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
