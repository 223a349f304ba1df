package policy

import (
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command as far as it is known before the command runs.
type arg struct {
	// text is the word with its quoting removed. It is exact when static is true; otherwise
	// it holds the static pieces only (for messages and heuristics).
	text string
	// static: the word's value is known.
	static bool
	// split: the word may become any number of words, including none (an unquoted
	// expansion, a glob, a brace expansion).
	split bool
	// glob: the word holds unquoted glob characters.
	glob bool
	// src is the word as written, for messages.
	src string
	// word is the parsed word, when the arg is one; the path checks expand it with the
	// variables the line sets when its value is not static (see candidates).
	word *syntax.Word
}

func staticArg(s string) arg { return arg{text: s, static: true, src: shellQuote(s)} }

// dynamicArg is a word known to be exactly one word with an unknown value.
func dynamicArg(src string) arg { return arg{src: src} }

// wordMode is the quoting context a word part is read in.
type wordMode int

const (
	modeUnquoted wordMode = iota
	modeDouble            // inside "…"
	modeHeredoc           // body of a here-document with an unquoted delimiter
)

// evalWord works out what a word will be. src is the script the word was parsed from.
func evalWord(w *syntax.Word, src string) arg {
	a := arg{static: true, src: nodeText(w, src), word: w}
	var b strings.Builder
	var shape strings.Builder // unquoted text, with quoted characters replaced, for brace detection
	for i, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			s := x.Value
			if i == 0 && (s == "~" || strings.HasPrefix(s, "~/")) {
				if home, err := os.UserHomeDir(); err == nil {
					s = home + strings.TrimPrefix(s, "~")
				} else {
					a.static = false
				}
			} else if i == 0 && strings.HasPrefix(s, "~") {
				a.static = false // ~user
			}
			text, meta := unescapeUnquoted(s)
			if meta {
				a.glob, a.split, a.static = true, true, false
			}
			b.WriteString(text)
			shape.WriteString(braceShape(s))
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				d, ok := ansiC(v)
				if !ok {
					a.static = false
				}
				v = d
			}
			b.WriteString(v)
			shape.WriteString(strings.Repeat("x", len(v)))
		case *syntax.DblQuoted:
			t, static, split := evalParts(x.Parts, modeDouble)
			if !static {
				a.static = false
			}
			if split {
				a.split = true
			}
			b.WriteString(t)
			shape.WriteString(strings.Repeat("x", len(t)))
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ExtGlob, *syntax.BraceExp:
			a.static, a.split = false, true
			if _, ok := x.(*syntax.ExtGlob); ok {
				a.glob = true
			}
			shape.WriteString("x")
		case *syntax.ProcSubst:
			a.static = false
			shape.WriteString("x")
		default:
			a.static, a.split = false, true
		}
	}
	if hasBraceExpansion(shape.String()) {
		a.static, a.split = false, true
	}
	a.text = b.String()
	return a
}

// evalParts evaluates the parts of a double-quoted string or a here-document body.
func evalParts(parts []syntax.WordPart, mode wordMode) (text string, static, split bool) {
	var b strings.Builder
	static = true
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeDouble(x.Value, mode))
		case *syntax.ParamExp:
			static = false
			if x.Param != nil && (x.Param.Value == "@" || x.Param.Value == "*") || x.Index != nil {
				split = true // "$@", "${a[@]}"
			}
		default:
			static = false
		}
	}
	return b.String(), static, split
}

// unescapeUnquoted removes backslash escapes from unquoted text and reports unescaped glob
// characters.
func unescapeUnquoted(s string) (string, bool) {
	if !strings.ContainsAny(s, `\*?[`) {
		return s, false
	}
	var b strings.Builder
	meta := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '\n' {
				continue
			}
			b.WriteByte(s[i])
			continue
		case c == '*' || c == '?':
			meta = true
		case c == '[' && strings.IndexByte(s[i+1:], ']') >= 0:
			meta = true
		}
		b.WriteByte(c)
	}
	return b.String(), meta
}

// unescapeDouble removes the backslashes that double quotes (or an unquoted here-document)
// honour: before $ ` " \ and newline (" only inside double quotes).
func unescapeDouble(s string, mode wordMode) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if n == '$' || n == '`' || n == '\\' || n == '\n' || n == '"' && mode == modeDouble {
				i++
				if n != '\n' {
					b.WriteByte(n)
				}
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// braceShape returns unquoted literal text with escaped characters neutralised, so that brace
// detection only sees braces the shell would act on.
func braceShape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			b.WriteString("xx")
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasBraceExpansion reports whether unquoted text contains {…,…} or {…..…}.
func hasBraceExpansion(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					inner := s[i+1 : j]
					if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
						return true
					}
					j = len(s)
				}
			}
		}
	}
	return false
}

// ansiC decodes the body of a $'…' string. ok is false for an escape it does not know.
func ansiC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j < i+1+maxDigits && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				if !utf8.ValidRune(rune(n)) {
					return "", false
				}
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// nodeText returns the source text of a node.
func nodeText(n syntax.Node, src string) string {
	if n == nil {
		return ""
	}
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return ""
	}
	return src[start:end]
}

// shellQuote renders s as one shell word.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%^", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
