package internal_test

// The machinery of the dependency rules (architecture_test.go holds the rules themselves): a
// pattern language for packages, a rule type, and a checker over an import graph. None of it
// runs `go list`, so rules_test.go can test it on made-up graphs.

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

const module = "github.com/reinhq/rein"

// pattern names packages. "./rel" is the package at rel in this module and "./rel/..." it and
// every package below it ("./..." is the whole module); any other pattern is an import path as
// `go list` prints it — the standard library or another module — exact, or "path/..." for the
// path and everything below it.
type pattern struct {
	raw  string
	path string // the full import path
	tree bool   // path and everything below it
}

// parsePattern checks s and returns its pattern. A pattern is malformed when it is empty, holds
// spaces or backslashes, uses "..." other than as a final "/...", ends in "/", has an empty,
// "." or ".." element, or names a path of this module without "./" (either spelled out with the module path
// or as "internal/…", "cmd/…" or "bench/…", which would silently name standard-library or no
// packages).
func parsePattern(s string) (pattern, error) {
	p := pattern{raw: s}
	if s == "" {
		return p, errors.New("empty pattern")
	}
	if strings.ContainsAny(s, " \t\r\n\\") {
		return p, errors.New("a pattern holds no spaces or backslashes")
	}
	rest, tree := strings.CutSuffix(s, "/...")
	p.tree = tree
	if strings.Contains(rest, "...") {
		return p, errors.New(`"..." may only end a pattern, as "/..."`)
	}
	if strings.HasSuffix(rest, "/") {
		return p, errors.New("a pattern does not end in \"/\"")
	}
	own := rest == "." || strings.HasPrefix(rest, "./")
	switch {
	case rest == ".":
		rest = ""
	case own:
		rest = rest[len("./"):]
	}
	if rest != "" || !own {
		for _, e := range strings.Split(rest, "/") {
			if e == "" || e == "." || e == ".." {
				return p, fmt.Errorf("empty, \".\" or \"..\" element in %q", rest)
			}
		}
	}
	switch first, _, _ := strings.Cut(rest, "/"); {
	case own && rest == "":
		p.path = module
	case own:
		p.path = module + "/" + rest
	case rest == module || strings.HasPrefix(rest, module+"/"):
		return p, fmt.Errorf("write this module's packages as %q", "./"+strings.TrimPrefix(strings.TrimPrefix(rest, module), "/"))
	case first == "internal" || first == "cmd" || first == "bench":
		return p, fmt.Errorf("%q is no package of this module (nor one a rule means); write %q", s, "./"+s)
	default:
		p.path = rest
	}
	return p, nil
}

// match says whether the import path is one the pattern names.
func (p pattern) match(importPath string) bool {
	return importPath == p.path || p.tree && strings.HasPrefix(importPath, p.path+"/")
}

// own says whether the pattern names packages of this module.
func (p pattern) own() bool { return isOwn(p.path) }

func isOwn(importPath string) bool {
	return importPath == module || strings.HasPrefix(importPath, module+"/")
}

// rule forbids the packages pkgs names (less those except names) to import what forbid names.
type rule struct {
	pkgs   []string // the packages the rule binds; each pattern must name at least one
	except []string // packages among them the rule does not bind
	forbid []string // what they must not import
	// allow lists imports forbid names that are allowed, each saying why; an allow entry no
	// bound package needs is an error, so none outlives its reason.
	allow []allowed
	// direct checks direct imports only; otherwise every package linked (go list's Deps).
	direct bool
	reason string
	// pending names the issue whose change will make the rule hold. Until then a violation is
	// logged, not failed; once the rule holds, the test fails until the flag is removed.
	pending string
}

type allowed struct{ pattern, reason string }

// graph is the import graph: the direct imports of every package (of the module and of all it
// links) and, for each package of the module, everything it links.
type graph struct {
	imports map[string][]string
	deps    map[string][]string
}

// report is what checking the rules found: failures fail the test, notes are logged.
type report struct {
	failures []string
	notes    []string
}

func (r *report) fail(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// check checks every rule against g.
func check(rules []rule, g graph) report {
	var rep report
	for _, r := range rules {
		r.check(g, &rep)
	}
	return rep
}

// compiled is a rule with its patterns parsed.
type compiled struct {
	pkgs, except, forbid, allow []pattern
}

func (r rule) name() string {
	n := strings.Join(r.pkgs, ", ")
	if len(r.except) > 0 {
		n += " except " + strings.Join(r.except, ", ")
	}
	return n
}

// compile parses the rule's patterns and checks it is complete.
func (r rule) compile() (compiled, error) {
	var c compiled
	var errs []error
	if strings.TrimSpace(r.reason) == "" {
		errs = append(errs, errors.New("the rule gives no reason"))
	}
	if len(r.pkgs) == 0 || len(r.forbid) == 0 {
		errs = append(errs, errors.New("the rule needs packages to bind and imports to forbid"))
	}
	parse := func(list []string, into *[]pattern) {
		for _, s := range list {
			p, err := parsePattern(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("pattern %q: %w", s, err))
			}
			*into = append(*into, p)
		}
	}
	parse(r.pkgs, &c.pkgs)
	parse(r.except, &c.except)
	parse(r.forbid, &c.forbid)
	for _, a := range r.allow {
		if strings.TrimSpace(a.reason) == "" {
			errs = append(errs, fmt.Errorf("allow %q gives no reason", a.pattern))
		}
	}
	parse(allowPatterns(r.allow), &c.allow)
	return c, errors.Join(errs...)
}

func allowPatterns(list []allowed) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.pattern)
	}
	return out
}

func matchAny(ps []pattern, importPath string) int {
	return slices.IndexFunc(ps, func(p pattern) bool { return p.match(importPath) })
}

// bound returns the packages of the module the rule binds, sorted, and fails every package
// pattern that binds none.
func (c compiled) bound(name string, g graph, rep *report) []string {
	var out []string
	for _, p := range c.pkgs {
		n := 0
		for _, pkg := range sortedKeys(g.deps) {
			if p.match(pkg) && matchAny(c.except, pkg) < 0 {
				n++
				if !slices.Contains(out, pkg) {
					out = append(out, pkg)
				}
			}
		}
		if n == 0 {
			rep.fail("rule %s: %q matches no package of the module (renamed or removed?): fix the rule, or it checks nothing", name, p.raw)
		}
	}
	sort.Strings(out)
	return out
}

func (r rule) check(g graph, rep *report) {
	name := r.name()
	c, err := r.compile()
	if err != nil {
		rep.fail("rule %s is malformed: %v", name, err)
		return
	}
	for _, f := range c.forbid {
		if f.own() && !slices.ContainsFunc(sortedKeys(g.deps), f.match) {
			rep.note("rule %s: forbidden %s is no package of the module (yet)", name, f.raw)
		}
	}
	used := make([]bool, len(c.allow))
	var violations []string
	for _, pkg := range c.bound(name, g, rep) {
		list := g.deps[pkg]
		if r.direct {
			list = g.imports[pkg]
		}
		for _, d := range list {
			if matchAny(c.forbid, d) < 0 {
				continue
			}
			if i := matchAny(c.allow, d); i >= 0 {
				used[i] = true
				continue
			}
			violations = append(violations, strings.Join(chain(g, pkg, d), " → "))
		}
	}
	for i, u := range used {
		if !u {
			rep.fail("rule %s: allow %q is needed by no package the rule binds: remove it", name, r.allow[i].pattern)
		}
	}
	if len(violations) == 0 {
		if r.pending != "" {
			rep.fail("rule %s holds now: remove its pending %q so it is enforced", name, r.pending)
		}
		return
	}
	text := fmt.Sprintf("rule %s: must not import %s, but\n\t%s\n\twhy: %s",
		name, strings.Join(r.forbid, ", "), strings.Join(violations, "\n\t"), r.reason)
	if r.pending != "" {
		rep.note("pending (%s), not yet enforced: %s", r.pending, text)
		return
	}
	rep.fail("forbidden: %s", text)
}

// chain returns a shortest import chain from pkg to dep (both included), with this module's
// prefix dropped; just the two ends when the graph does not say how.
func chain(g graph, pkg, dep string) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 && prev[dep] == "" {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g.imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	if _, ok := prev[dep]; !ok || dep == pkg {
		return []string{short(pkg), short(dep)}
	}
	var out []string
	for p := dep; p != ""; p = prev[p] {
		out = append(out, short(p))
	}
	slices.Reverse(out)
	return out
}

func short(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
