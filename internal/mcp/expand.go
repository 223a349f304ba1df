package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// ErrUnsetVariable: a server's entry names ${VAR} without a default and VAR is not set.
var ErrUnsetVariable = errors.New("an MCP server's configuration names a variable that is not set")

// Expand replaces ${VAR} and ${VAR:-default} in a server's command, args, env values, url
// and headers, as Claude Code's .mcp.json does: VAR is read with getenv; an unset (or empty)
// VAR takes the default. One without a default is an error naming the server and every such
// variable (matching [ErrUnsetVariable]): the server cannot be started as configured. "$" not
// followed by "{" is literal, as is "${" not closed or holding no variable name.
func Expand(s Server, getenv func(string) string) (Server, error) {
	var missing []string
	x := func(v string) string {
		out, m := expand(v, getenv)
		for _, name := range m {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
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
	if len(missing) > 0 {
		refs := make([]string, len(missing))
		for i, m := range missing {
			refs[i] = "${" + m + "}"
		}
		return s, fmt.Errorf("%w: MCP server %s (%s): %s not set and without a default: set it in the environment or the settings' \"env\", or write ${NAME:-default}",
			ErrUnsetVariable, s.Name, s.Source, strings.Join(refs, ", ")+map[bool]string{true: " is", false: " are"}[len(refs) == 1])
	}
	return s, nil
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
