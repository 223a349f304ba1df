package command

import (
	"bytes"
	"fmt"
	"strings"
)

// EnvFileName is the name of the file a SessionStart hook finds in CLAUDE_ENV_FILE.
const EnvFileName = "session-env.sh"

// MaxEnvFileBytes bounds what is read of an env file; the rest is ignored with a problem.
const MaxEnvFileBytes = 64 << 10

// EnvProblem is a line of an env file that was ignored. It never holds the line's text (a
// value may be a secret): only where it is and why, and the name when one was read.
type EnvProblem struct {
	Line int
	Name string
	Why  string
}

func (p EnvProblem) String() string {
	if p.Name != "" {
		return fmt.Sprintf("line %d (%s): %s", p.Line, p.Name, p.Why)
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.Why)
}

// ParseEnvFile reads the lines a hook wrote to CLAUDE_ENV_FILE without running a shell.
// Each line is blank, a comment (#…), or one assignment, `export NAME=VALUE` or
// `NAME=VALUE`, whose value is made of unquoted words (a backslash escapes the next
// character), '…' (literal) and "…" (a backslash escapes $ ` " \) parts, with $NAME and
// ${NAME} expanded from earlier lines, then lookup; a comment may follow after blanks.
// Anything else — other commands, command substitution, other expansions, several
// assignments on a line — is a problem and the line is ignored. It returns the assignments
// in order as NAME=VALUE.
func ParseEnvFile(data []byte, lookup func(string) (string, bool)) ([]string, []EnvProblem) {
	var vars []string
	var problems []EnvProblem
	set := map[string]string{}
	get := func(name string) string {
		if v, ok := set[name]; ok {
			return v
		}
		if lookup != nil {
			v, _ := lookup(name)
			return v
		}
		return ""
	}
	if len(data) > MaxEnvFileBytes {
		cut := bytes.LastIndexByte(data[:MaxEnvFileBytes], '\n') + 1
		problems = append(problems, EnvProblem{Line: bytes.Count(data[:cut], []byte("\n")) + 1,
			Why: fmt.Sprintf("the file is larger than %d bytes: the rest is ignored", MaxEnvFileBytes)})
		data = data[:cut]
	}
	for i, line := range strings.Split(string(data), "\n") {
		name, value, why := parseEnvLine(strings.TrimSuffix(line, "\r"), get)
		switch {
		case why != "":
			problems = append(problems, EnvProblem{Line: i + 1, Name: name, Why: why})
		case name != "":
			set[name] = value
			vars = append(vars, name+"="+value)
		}
	}
	return vars, problems
}

// parseEnvLine reads one line; name "" and why "" is a line with nothing to set.
func parseEnvLine(line string, get func(string) string) (name, value, why string) {
	s := strings.TrimLeft(line, " \t")
	if s == "" || s[0] == '#' {
		return "", "", ""
	}
	if rest, ok := strings.CutPrefix(s, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		s = strings.TrimLeft(rest, " \t")
	}
	eq := strings.IndexByte(s, '=')
	if eq <= 0 || !validName(s[:eq]) {
		return "", "", "not an `export NAME=VALUE` line"
	}
	name = s[:eq]
	value, rest, why := parseEnvValue(s[eq+1:], get)
	if why != "" {
		return name, "", why
	}
	if rest = strings.TrimLeft(rest, " \t"); rest != "" && rest[0] != '#' {
		return name, "", "more than one word after the assignment (quote the value)"
	}
	return name, value, ""
}

// parseEnvValue reads a value up to the first unquoted blank, returning it and the rest.
func parseEnvValue(s string, get func(string) string) (string, string, string) {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			return b.String(), s[i:], ""
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", "", "an unterminated '"
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			n, why := doubleQuoted(s[i+1:], &b, get)
			if why != "" {
				return "", "", why
			}
			i += n + 2
		case c == '\\':
			if i+1 >= len(s) {
				return "", "", "a line continuation (a value must fit on one line)"
			}
			b.WriteByte(s[i+1])
			i += 2
		case c == '$':
			n, why := expand(s[i:], &b, get)
			if why != "" {
				return "", "", why
			}
			i += n
		case strings.IndexByte("`;&|<>()", c) >= 0:
			return "", "", fmt.Sprintf("%q needs a shell (quote the value)", c)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), "", ""
}

// doubleQuoted reads the inside of "…" from s into b, returning the length up to the
// closing quote.
func doubleQuoted(s string, b *strings.Builder, get func(string) string) (int, string) {
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '"':
			return i, ""
		case '\\':
			if i+1 >= len(s) {
				return 0, "a line continuation (a value must fit on one line)"
			}
			if strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
				b.WriteByte(s[i+1])
			} else {
				b.WriteString(s[i : i+2])
			}
			i += 2
		case '$':
			n, why := expand(s[i:], b, get)
			if why != "" {
				return 0, why
			}
			i += n
		case '`':
			return 0, "command substitution needs a shell"
		default:
			b.WriteByte(c)
			i++
		}
	}
	return 0, `an unterminated "`
}

// expand reads $NAME or ${NAME} at the start of s into b, returning its length.
func expand(s string, b *strings.Builder, get func(string) string) (int, string) {
	if strings.HasPrefix(s, "${") {
		end := strings.IndexByte(s, '}')
		if end < 0 || !validName(s[2:end]) {
			return 0, "only $NAME and ${NAME} expansions are read"
		}
		b.WriteString(get(s[2:end]))
		return end + 1, ""
	}
	n := 1
	for n < len(s) && (s[n] == '_' || isAlnum(s[n])) {
		n++
	}
	if n == 1 || !validName(s[1:n]) {
		return 0, "only $NAME and ${NAME} expansions are read"
	}
	b.WriteString(get(s[1:n]))
	return n, ""
}

// ValidEnvName reports whether s is a portable environment variable name: letters, digits
// and "_", not starting with a digit.
func ValidEnvName(s string) bool { return validName(s) }

func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '_' && !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
