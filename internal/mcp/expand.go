package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// Expand replaces ${VAR} and ${VAR:-default} in a server's command, args, env values, url
// and headers, as Claude Code does: VAR is read with getenv; an unset (or empty) VAR without
// a default is left as written and named in a warning. "$" not followed by "{" is literal.
func Expand(s Server, getenv func(string) string) (Server, []string) {
	var warn []string
	seen := map[string]bool{}
	x := func(v string) string {
		out, missing := expand(v, getenv)
		for _, m := range missing {
			if !seen[m] {
				seen[m] = true
				warn = append(warn, fmt.Sprintf("MCP server %s: ${%s} is not set and has no default; it was left as written", s.Name, m))
			}
		}
		return out
	}
	s.Command = x(s.Command)
	s.URL = x(s.URL)
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = x(a)
	}
	s.Args = args
	expandMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out[k] = x(m[k])
		}
		return out
	}
	s.Env, s.Headers = expandMap(s.Env), expandMap(s.Headers)
	return s, warn
}

// expand expands one string; missing lists the variables left as written.
func expand(v string, getenv func(string) string) (string, []string) {
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), missing
		}
		end := strings.IndexByte(v[i:], '}')
		if end < 0 {
			b.WriteString(v)
			return b.String(), missing
		}
		b.WriteString(v[:i])
		ref := v[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVar(name) {
			b.WriteString(v[i : i+end+1])
		} else if val := getenv(name); val != "" {
			b.WriteString(val)
		} else if hasDef {
			b.WriteString(def)
		} else {
			b.WriteString(v[i : i+end+1])
			missing = append(missing, name)
		}
		v = v[i+end+1:]
	}
}

func validVar(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func mapsKeys(m map[string]string) func(func(string) bool) { return maps.Keys(m) }
