package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/strictjson"
)

// pathArgSuffixes are the endings (after lower-casing, "_" and "-" dropped) of argument
// names that hold paths in tools rein does not know (MCP servers, extensions): path,
// filePath, file_path, paths, file, files, filename, dir, directory, cwd, uri.
var pathArgSuffixes = []string{"path", "paths", "file", "files", "filename", "filenames", "dir", "dirs", "directory", "directories", "cwd", "uri"}

// isPathArg reports whether an argument name looks like it holds a path.
func isPathArg(key string) bool {
	k := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(key))
	return slices.ContainsFunc(pathArgSuffixes, func(s string) bool { return strings.HasSuffix(k, s) })
}

// decideOther checks a call of a tool that is neither bash nor a file tool: whole-tool
// rules, then every top-level argument named like a path (see isPathArg; a string or an
// array of strings, "file://" dropped) against the read(…) and write(…)/edit(…) deny and ask
// rules, since what such a tool does with a path is unknown. This is the extension point
// for tools added later (MCP tools taking paths): the rules hold for them without a change
// here. Deny wins over ask, ask over allow; arguments that cannot be read are left to the
// tool's own validation.
func (p *Policy) decideOther(name, raw string) Decision {
	d := p.decideWhole(name)
	if d.Verdict == Deny {
		return d
	}
	var worst *Decision
	for _, target := range pathArgs(raw) {
		for _, op := range []Op{OpRead, OpWrite} {
			pd := p.decideRulesOnly(op, target)
			if pd.Verdict == Deny {
				return pd
			}
			if pd.Verdict == Ask && worst == nil {
				worst = &pd
			}
		}
	}
	if worst != nil && d.Verdict != Ask {
		return *worst
	}
	return d
}

// decideRulesOnly applies the deny and ask path rules of op (read(…) for reads, write(…) and
// edit(…) for writes) and the read-protected paths to target; protected paths (writes) are
// not applied, since the tool may only read.
func (p *Policy) decideRulesOnly(op Op, target string) Decision {
	rel, abs := p.resolve(target, "")
	shown := target
	if rel != "" {
		shown = rel
	}
	if g, ok := p.isReadProtected(rel, abs); ok {
		return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: shown, Reason: readProtectedReason(shown, g)}
	}
	tool := ToolRead
	if op == OpWrite {
		tool = ToolWrite
	}
	what := fmt.Sprintf("a path argument naming %s (%s)", shown, opVerb(op))
	for _, list := range []struct {
		rules []Rule
		v     Verdict
	}{{p.deny, Deny}, {p.ask, Ask}} {
		for _, r := range list.rules {
			if r.kind == kindPath && ruleCoversTool(r.Tool, tool) && r.path.Match(rel, abs, true) {
				return verdictFor(list.v, r.Raw, shown, what)
			}
		}
	}
	return Decision{Verdict: NoMatch, Part: shown}
}

// pathArgs returns the values of the top-level arguments named like paths.
func pathArgs(raw string) []string {
	tree, err := strictjson.Decode(raw)
	if err != nil {
		return nil
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, strings.TrimPrefix(s, "file://"))
		}
	}
	for k, v := range obj {
		if !isPathArg(k) {
			continue
		}
		if list, ok := v.([]any); ok {
			for _, e := range list {
				add(e)
			}
			continue
		}
		add(v)
	}
	slices.Sort(out)
	return out
}
