package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/reinhq/rein/internal/pathrule"
)

// DecideCommand checks a bash command line. The line is parsed and every simple command in
// it — in pipelines, lists, subshells, groups, substitutions, functions, bash -c and eval
// scripts, behind wrappers like env, sudo, timeout, xargs and find -exec — is a part:
//
//   - an unparseable line, or one whose effect cannot be known in advance, is denied;
//   - a write to a protected path is denied;
//   - a part that may match a deny rule denies the line; then one that may match an ask
//     rule makes it Ask;
//   - the line is allowed only when every part is approved by an allow rule (wrappers whose
//     inner command is a part of its own need no rule themselves);
//   - otherwise the verdict is NoMatch.
func (p *Policy) DecideCommand(line string) Decision {
	shown := oneLine(line)
	for _, r := range p.deny {
		if r.kind == kindTool && r.Tool == ToolBash {
			return verdictFor(Deny, r.Raw, shown, "the bash tool")
		}
	}
	an := analyse(line)
	if an.err != nil {
		return Decision{Verdict: Deny, Code: an.err.Code, Part: shown, Reason: an.err.Message}
	}
	if d, ok := p.checkWrites(an); ok {
		return d
	}
	if d, ok := p.checkReadProtected(an); ok {
		return d
	}
	// Deny, then ask: a rule that may match any part decides.
	for _, list := range []struct {
		rules []Rule
		v     Verdict
	}{{p.deny, Deny}, {p.ask, Ask}} {
		for _, r := range list.rules {
			if r.kind == kindTool && r.Tool == ToolBash {
				return verdictFor(list.v, r.Raw, shown, "the bash tool")
			}
		}
		for _, pt := range an.parts {
			for _, r := range list.rules {
				if r.kind == kindCommand && commandMatch(r.tokens, pt.argv, false) {
					return verdictFor(list.v, r.Raw, pt.String(), describePart(pt, len(an.parts)))
				}
			}
		}
		if d, ok := p.checkPathRules(an, list.rules, list.v); ok {
			return d
		}
	}
	// Allow: every part must be approved.
	for _, r := range p.allow {
		if r.kind == kindTool && r.Tool == ToolBash {
			return verdictFor(Allow, r.Raw, shown, "the bash tool")
		}
	}
	if len(an.parts) == 0 {
		return Decision{Verdict: NoMatch, Part: shown, Reason: "the line runs no command that a rule could approve"}
	}
	var first string
	for _, pt := range an.parts {
		if pt.transparent {
			continue
		}
		risky := firstNonEmpty(pt.risky, an.risky)
		matched := ""
		if risky == "" {
			for _, r := range p.allow {
				if r.kind == kindCommand && commandMatch(r.tokens, pt.argv, true) {
					matched = r.Raw
					break
				}
			}
		}
		if matched == "" {
			why := "no allow rule matches it"
			if risky != "" {
				why = risky + ", so no specific allow rule can approve it"
			}
			return Decision{Verdict: NoMatch, Part: pt.String(), Reason: fmt.Sprintf("%s: %s", describePart(pt, len(an.parts)), why)}
		}
		if first == "" {
			first = matched
		}
	}
	if first == "" {
		return Decision{Verdict: NoMatch, Part: shown, Reason: "the line runs no command that a rule could approve"}
	}
	return Decision{Verdict: Allow, Rule: first, Part: shown, Reason: fmt.Sprintf("every command in the line is allowed (first rule %q)", first)}
}

func describePart(pt *part, n int) string {
	s := fmt.Sprintf("the command %q", pt.String())
	if pt.via != "" {
		s += " (run by " + pt.via + ")"
	}
	if n > 1 {
		s += " in the line"
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// cwds returns the directories (workspace-relative or absolute; "" is the root) a relative
// path in the line may be relative to, and whether one of them is unknown. Loops and
// branches make the order of directory changes unreliable, so every change in the line
// counts, before or after the path: each target on its own and each in sequence.
func cwds(cds []cdEvent) ([]string, bool) {
	out := []string{""}
	seen := map[string]bool{"": true}
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	cur, unknown := "", false
	for _, cd := range cds {
		if !cd.known {
			unknown = true
			continue
		}
		if path.IsAbs(cd.dir) {
			cur = path.Clean(cd.dir)
		} else {
			cur = path.Join(cur, cd.dir)
		}
		add(cur)
		add(path.Clean(cd.dir))
	}
	return out, unknown
}

// refPaths resolves a static path reference against every possible working directory.
func (p *Policy) refPaths(ref pathRef, cds []cdEvent) (paths [][2]string, unknownCwd bool) {
	t := ref.a.text
	dirs, unknown := cwds(cds)
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") {
		rel, abs := p.resolve(t, "")
		return [][2]string{{rel, abs}}, false
	}
	for _, d := range dirs {
		rel, abs := p.resolve(t, d)
		paths = append(paths, [2]string{rel, abs})
	}
	return paths, unknown
}

// checkWrites denies writes to protected paths.
func (p *Policy) checkWrites(an *analysis) (Decision, bool) {
	for _, ref := range an.writes {
		for _, w := range p.candidates(ref, an, false) {
			if d, ok := p.checkWrite(w, an); ok {
				return d, true
			}
		}
	}
	return Decision{}, false
}

// checkReadProtected denies reads of read-protected paths ($REIN_HOME).
func (p *Policy) checkReadProtected(an *analysis) (Decision, bool) {
	for _, ref := range an.reads {
		for _, r := range p.candidates(ref, an, true) {
			if r.a.glob {
				for _, g := range p.readProtected.Globs() {
					if p.refMatches(g, r, an) {
						return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: r.a.src, Reason: readProtectedReason(r.a.src, g.String())}, true
					}
				}
				continue
			}
			paths, _ := p.refPaths(r, an.cds)
			for _, rp := range paths {
				if g, ok := p.isReadProtected(rp[0], rp[1]); ok {
					return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: r.a.src, Reason: readProtectedReason(r.a.src, g)}, true
				}
			}
		}
	}
	return Decision{}, false
}

// checkWrite denies one write to a protected path.
func (p *Policy) checkWrite(w pathRef, an *analysis) (Decision, bool) {
	if w.a.glob {
		for _, g := range p.protected.Globs() {
			if p.refMatches(g, w, an) {
				return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: w.a.src, Reason: pathrule.Reason(w.a.src, g.String())}, true
			}
		}
		return Decision{}, false
	}
	if !w.a.static {
		return Decision{}, false
	}
	if w.a.text == "/dev/null" || w.a.text == "/dev/stdout" || w.a.text == "/dev/stderr" {
		return Decision{}, false
	}
	paths, unknown := p.refPaths(w, an.cds)
	if unknown && len(p.protected.Globs()) > 0 {
		return Decision{Verdict: Deny, Code: CodeUnanalysable, Part: w.a.src, Reason: fmt.Sprintf("the line writes to the relative path %s after changing to a directory that cannot be known in advance, so it cannot be checked against the protected paths; use a fixed directory or a path from the workspace root", w.a.src)}, true
	}
	for _, rp := range paths {
		if g, ok := p.isProtected(rp[0], rp[1]); ok {
			shown := rp[0]
			if shown == "" {
				shown = rp[1]
			}
			return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: w.a.src, Reason: pathrule.Reason(shown, g)}, true
		}
	}
	return Decision{}, false
}

// checkPathRules applies read(…) rules to the paths the line reads (redirections and
// arguments) and write(…)/edit(…) rules to those it writes. Only deny and ask rules are
// applied: a path rule cannot approve a command.
func (p *Policy) checkPathRules(an *analysis, rules []Rule, v Verdict) (Decision, bool) {
	for _, r := range rules {
		if r.kind != kindPath {
			continue
		}
		var refs []pathRef
		verb := ""
		switch r.Tool {
		case ToolRead:
			refs, verb = an.reads, "reads"
		case ToolWrite, ToolEdit:
			refs, verb = an.writes, "writes"
		default:
			continue
		}
		for _, ref := range refs {
			for _, c := range p.candidates(ref, an, r.Tool == ToolRead) {
				if p.refMatches(r.path, c, an) {
					return verdictFor(v, r.Raw, ref.a.src, fmt.Sprintf("the command line %s %s, which", verb, describeRef(ref, c))), true
				}
			}
		}
	}
	return Decision{}, false
}

// refMatches reports whether a path reference may match the glob of a path rule or a
// protected path. A glob argument ("cat .e*", "rm -rf .g*") matches when some path it may
// expand to could match the glob.
func (p *Policy) refMatches(g pathrule.Glob, ref pathRef, an *analysis) bool {
	if !ref.a.static && !ref.a.glob {
		return false
	}
	paths, _ := p.refPaths(ref, an.cds)
	for _, rp := range paths {
		if ref.a.glob {
			target := rp[0]
			if g.Abs() {
				target = rp[1]
			}
			if target != "" && globsIntersect(splitPath(strings.ToLower(target)), splitPath(strings.ToLower(g.Pattern())), an.dotglob) {
				return true
			}
			continue
		}
		if g.Match(rp[0], rp[1], true) {
			return true
		}
	}
	return false
}

// describeRef names a path reference in a message: as written, and with the value it was
// found to take when that differs ("$f" (.env)).
func describeRef(ref, c pathRef) string {
	if c.a.text == "" || c.a.text == ref.a.src || shellQuote(c.a.text) == ref.a.src {
		return ref.a.src
	}
	return fmt.Sprintf("%s (%s)", ref.a.src, c.a.text)
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// globsIntersect reports whether a shell glob path (the argument) may name a path that a
// rule glob matches, or a path below one. It is a conservative approximation: true when in
// doubt.
func globsIntersect(arg, rule []string, dotglob bool) bool {
	if len(rule) == 0 {
		return true // at or below a path the rule matches
	}
	if len(arg) == 0 {
		for _, r := range rule {
			if r != "**" {
				return false
			}
		}
		return true
	}
	if rule[0] == "**" {
		return globsIntersect(arg, rule[1:], dotglob) || globsIntersect(arg[1:], rule, dotglob)
	}
	if arg[0] == "**" { // globstar
		return globsIntersect(arg[1:], rule, dotglob) || globsIntersect(arg, rule[1:], dotglob) || globsIntersect(arg[1:], rule[1:], dotglob)
	}
	return segmentsIntersect(arg[0], rule[0], dotglob) && globsIntersect(arg[1:], rule[1:], dotglob)
}

// segmentsIntersect compares one path element of a shell glob with one of a rule glob. A
// shell wildcard does not match a leading dot unless the line turns on dotglob.
func segmentsIntersect(a, r string, dotglob bool) bool {
	if !dotglob && strings.ContainsAny(a, "*?[") && strings.HasPrefix(r, ".") && !strings.HasPrefix(a, ".") {
		return false
	}
	return patternsIntersect(globTokens(a), globTokens(r))
}

// globToken is one element of a glob: a literal character, "?" (any one), "*" (any run) or
// a bracket class.
type globToken struct {
	kind  byte // 'l' literal, '?' any, '*' star, '[' class
	ch    rune
	class string // the class body, "!"/"^" first for negation
}

func globTokens(p string) []globToken {
	var out []globToken
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			if len(out) == 0 || out[len(out)-1].kind != '*' {
				out = append(out, globToken{kind: '*'})
			}
		case '?':
			out = append(out, globToken{kind: '?'})
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			out = append(out, globToken{kind: 'l', ch: rs[i]})
		case '[':
			j := i + 1
			if j < len(rs) && (rs[j] == '!' || rs[j] == '^') {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				out = append(out, globToken{kind: 'l', ch: c})
				continue
			}
			out = append(out, globToken{kind: '[', class: string(rs[i+1 : j])})
			i = j
		default:
			out = append(out, globToken{kind: 'l', ch: c})
		}
	}
	return out
}

// classHas reports whether a bracket class body matches r.
func classHas(class string, r rune) bool {
	neg := strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^")
	if neg {
		class = class[1:]
	}
	rs := []rune(class)
	hit := false
	for i := 0; i < len(rs); i++ {
		if i+2 < len(rs) && rs[i+1] == '-' {
			if rs[i] <= r && r <= rs[i+2] {
				hit = true
			}
			i += 2
			continue
		}
		if rs[i] == r {
			hit = true
		}
	}
	return hit != neg
}

// tokensCompatible reports whether two single-character tokens can match the same
// character (two classes are assumed to overlap).
func tokensCompatible(a, b globToken) bool {
	switch {
	case a.kind == '?' || b.kind == '?':
		return true
	case a.kind == 'l' && b.kind == 'l':
		return a.ch == b.ch
	case a.kind == 'l':
		return classHas(b.class, a.ch)
	case b.kind == 'l':
		return classHas(a.class, b.ch)
	}
	return true
}

// patternsIntersect reports whether some string matches both globs.
func patternsIntersect(a, b []globToken) bool {
	memo := map[[2]int]bool{}
	var f func(i, j int) bool
	f = func(i, j int) bool {
		if v, ok := memo[[2]int{i, j}]; ok {
			return v
		}
		memo[[2]int{i, j}] = false
		var v bool
		switch {
		case i == len(a) && j == len(b):
			v = true
		case i < len(a) && a[i].kind == '*':
			v = f(i+1, j) || j < len(b) && f(i, j+1)
		case j < len(b) && b[j].kind == '*':
			v = f(i, j+1) || i < len(a) && f(i+1, j)
		case i < len(a) && j < len(b):
			v = tokensCompatible(a[i], b[j]) && f(i+1, j+1)
		}
		memo[[2]int{i, j}] = v
		return v
	}
	return f(0, 0)
}

// commandMatch matches a command rule's word patterns against a part's words. With must
// false it reports whether the part may match (an unknown word may be anything, an unquoted
// expansion any number of words): deny and ask rules. With must true it reports whether the
// part matches whatever the unknown words turn out to be: allow rules.
func commandMatch(toks []string, argv []arg, must bool) bool {
	if len(argv) == 0 || len(toks) == 0 || !argv[0].static {
		return false
	}
	if !nameMatch(toks[0], argv[0].text, must) {
		return false
	}
	m := matcher{toks: toks[1:], args: argv[1:], must: must, memo: map[[2]int]bool{}}
	return m.match(0, 0)
}

// nameMatch matches the command name. A pattern without "/" matches a bare name; for deny
// and ask rules it also matches any path ending in that name ("rm" matches "/bin/rm"), but an
// allow rule only approves a command given by path when the pattern spells the path.
func nameMatch(tok, name string, must bool) bool {
	if wordMatch(tok, name) {
		return true
	}
	if must {
		return false
	}
	tokSlash, nameSlash := strings.Contains(tok, "/"), strings.Contains(name, "/")
	switch {
	case !tokSlash && nameSlash:
		return wordMatch(tok, path.Base(name))
	case tokSlash && !nameSlash:
		return wordMatch(tok[strings.LastIndexByte(tok, '/')+1:], name)
	case tokSlash && nameSlash:
		return wordMatch(tok, path.Clean(name))
	}
	return false
}

type matcher struct {
	toks []string
	args []arg
	must bool
	memo map[[2]int]bool
}

func (m *matcher) match(ti, ai int) bool {
	key := [2]int{ti, ai}
	if v, ok := m.memo[key]; ok {
		return v
	}
	m.memo[key] = false // cycles (a split word consuming no token) resolve to false
	v := m.step(ti, ai)
	m.memo[key] = v
	return v
}

func (m *matcher) step(ti, ai int) bool {
	if ai == len(m.args) {
		for _, t := range m.toks[ti:] {
			if t != "**" {
				return false
			}
		}
		return true
	}
	a := m.args[ai]
	if ti == len(m.toks) {
		// Only words that may expand to nothing can be left over, and only when guessing.
		if m.must || !a.split {
			return false
		}
		return m.match(ti, ai+1)
	}
	tok := m.toks[ti]
	if tok == "**" {
		return m.match(ti+1, ai) || m.match(ti, ai+1)
	}
	switch {
	case a.static:
		return wordMatch(tok, a.text) && m.match(ti+1, ai+1)
	case m.must:
		// An unknown word is certainly matched only by "*" (exactly one word), and only if
		// it cannot split.
		return !a.split && tok == "*" && m.match(ti+1, ai+1)
	case a.split:
		// It may be no word, one word, or several.
		return m.match(ti, ai+1) || m.match(ti+1, ai+1) || m.match(ti+1, ai)
	default:
		return m.match(ti+1, ai+1)
	}
}
