package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/strictjson"
	"github.com/reinhq/rein/internal/tool"
)

// Verdict is the outcome of a permission check.
type Verdict int

const (
	// NoMatch: no rule decided; the caller applies its default (usually: ask).
	NoMatch Verdict = iota
	// Allow: allow rules approve every part of the call.
	Allow
	// Ask: an ask rule matched; the user must approve.
	Ask
	// Deny: refused.
	Deny
)

func (v Verdict) String() string {
	switch v {
	case NoMatch:
		return "no-match"
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is the result of a permission check.
type Decision struct {
	Verdict Verdict
	// Code is set for Deny and Ask.
	Code Code
	// Rule is the rule that decided, as written; empty when no rule did (a protected path,
	// an unanalysable line, no match).
	Rule string
	// Part is the simple command (bash) or path (file tools) the decision is about.
	Part string
	// Reason says why, and for Deny and Ask what to do.
	Reason string
}

// Err returns the refusal as an *[Error] for Deny and Ask, and nil otherwise.
func (d Decision) Err() error {
	if d.Verdict != Deny && d.Verdict != Ask {
		return nil
	}
	return &Error{Code: d.Code, Message: d.Reason}
}

// DefaultProtected lists the workspace paths no tool or command may write, whatever the
// rules say: git internals (a .git directory and everything in it, or a worktree's .git
// file, also in nested repositories) and rein's project policy directory .rein
// (settings.json, SYSTEM.md, APPEND_SYSTEM.md, skills/…, also below the root, where a run
// started in that directory would read it).
var DefaultProtected = []string{"**/.git", "**/.rein"}

// StoreProtected names rein's own stores — a session ledger, its torn-tail evidence and
// lock, a content-addressed blob or artifact store — wherever they lie in a workspace. The
// file tools protect them besides [DefaultProtected]. They are not in DefaultProtected
// because the command rules match shell globs conservatively ("rm build/*" may name
// build/ledger.jsonl), so every wildcard write would be refused; a ledger's hash chain shows
// any change made behind rein's back, and --sandbox hides $REIN_HOME from commands.
var StoreProtected = []string{"**/ledger.jsonl", "**/ledger.jsonl.torn-*", "**/ledger.lock", "**/blobs/sha256"}

// protectedWhy says why a default protected glob is protected.
var protectedWhy = map[string]string{
	"**/.git":                "git's internals: a change can run code at the next git command (hooks, config) or corrupt the repository",
	"**/.rein":               "rein's project policy files (settings, system prompt, skills): they configure rein itself, so only the user changes them",
	"**/ledger.jsonl":        "a rein session ledger: the record of what happened, written only by rein",
	"**/ledger.jsonl.torn-*": "evidence kept by a ledger repair, written only by rein",
	"**/ledger.lock":         "a rein session ledger's lock, held only by rein",
	"**/blobs/sha256":        "a content-addressed store of rein's ledger payloads or artifacts, written only by rein",
}

// Config configures a [Policy].
type Config struct {
	Rules Rules
	// Protected lists path globs (workspace-relative, or absolute) that writes may never
	// touch, whatever the rules say; matched case-insensitively, a glob also covers
	// everything below what it matches. Nil means [DefaultProtected]; an empty non-nil
	// slice protects nothing.
	Protected []string
	// Dir is the absolute workspace directory. Absolute paths inside it are matched as
	// workspace-relative paths; without it, only relative paths are.
	Dir string
}

// Policy is a compiled set of permission rules. It is immutable and safe for concurrent use.
type Policy struct {
	allow, ask, deny []Rule
	protected        []Rule // kindPath rules
	dir              string
}

// New compiles cfg. Every malformed rule is reported (an *[Error] with [CodeBadRule]).
func New(cfg Config) (*Policy, error) {
	p := &Policy{dir: filepath.ToSlash(filepath.Clean(cfg.Dir))}
	if cfg.Dir == "" {
		p.dir = ""
	} else if !filepath.IsAbs(cfg.Dir) {
		return nil, errorf(CodeBadRule, "workspace directory %q is not absolute", cfg.Dir)
	}
	var problems []string
	compile := func(list []string) []Rule {
		var out []Rule
		for _, s := range list {
			r, err := ParseRule(s)
			if err != nil {
				problems = append(problems, err.(*Error).Message)
				continue
			}
			out = append(out, r)
		}
		return out
	}
	p.allow, p.ask, p.deny = compile(cfg.Rules.Allow), compile(cfg.Rules.Ask), compile(cfg.Rules.Deny)
	prot := cfg.Protected
	if prot == nil {
		prot = DefaultProtected
	}
	for _, g := range prot {
		glob, abs, err := pathGlob(strings.TrimSpace(g))
		if err != nil || strings.TrimSpace(g) == "" {
			problems = append(problems, fmt.Sprintf("protected path %q: %v", g, err))
			continue
		}
		p.protected = append(p.protected, Rule{Raw: g, kind: kindPath, glob: glob, abs: abs})
	}
	if len(problems) > 0 {
		return nil, errorf(CodeBadRule, "%s", strings.Join(problems, "; "))
	}
	return p, nil
}

// pathTools maps the file tools to the access they make and the argument holding the path.
var pathTools = map[string]struct {
	op       Op
	optional bool // the path may be omitted (the workspace root)
}{
	ToolRead:  {OpRead, false},
	ToolGrep:  {OpRead, true},
	ToolFind:  {OpRead, true},
	ToolLs:    {OpRead, true},
	ToolWrite: {OpWrite, false},
	ToolEdit:  {OpWrite, false},
}

// Decide checks one tool call. args are the call's validated arguments. For bash the
// command line is analysed ([Policy.DecideCommand]); for the file tools the path
// ([Policy.DecidePath] plus the tool's own rules); for any other tool only whole-tool rules
// apply.
func (p *Policy) Decide(toolName string, args json.RawMessage) Decision {
	name := strings.ToLower(toolName)
	if name == ToolBash {
		cmd, err := stringArg(args, "command", false)
		if err != nil {
			return Decision{Verdict: Deny, Code: CodeBadArguments, Reason: fmt.Sprintf("bash arguments could not be read for the permission check (%v); send {\"command\": \"...\"}", err)}
		}
		return p.DecideCommand(cmd)
	}
	pt, isPath := pathTools[name]
	if !isPath {
		return p.decideWhole(name)
	}
	target, err := stringArg(args, "path", pt.optional)
	if err != nil {
		return Decision{Verdict: Deny, Code: CodeBadArguments, Reason: fmt.Sprintf("%s arguments could not be read for the permission check (%v); send a \"path\" string", name, err)}
	}
	if target == "" {
		target = "."
	}
	return p.decidePath(name, pt.op, target)
}

// stringArg reads one string field of a tool call's arguments strictly (one JSON object, no
// duplicate keys, the exact key). A missing or null optional field is "".
func stringArg(args json.RawMessage, key string, optional bool) (string, error) {
	tree, err := strictjson.Decode(string(args))
	if err != nil {
		return "", err
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return "", fmt.Errorf("arguments are not a JSON object")
	}
	for k := range obj {
		if k != key && strings.EqualFold(k, key) {
			return "", fmt.Errorf("key %q differs from %q only in case", k, key)
		}
	}
	v, present := obj[key]
	if !present || v == nil {
		if optional {
			return "", nil
		}
		return "", fmt.Errorf("%q is missing", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%q is not a string", key)
	}
	return s, nil
}

// decideWhole applies whole-tool rules only.
func (p *Policy) decideWhole(name string) Decision {
	for _, list := range []struct {
		rules []Rule
		v     Verdict
	}{{p.deny, Deny}, {p.ask, Ask}, {p.allow, Allow}} {
		for _, r := range list.rules {
			if r.kind == kindTool && r.Tool == name {
				return verdictFor(list.v, r.Raw, name, fmt.Sprintf("the %s tool", name))
			}
		}
	}
	return Decision{Verdict: NoMatch, Part: name, Reason: fmt.Sprintf("no rule names the %s tool", name)}
}

// verdictFor builds the decision for a matching rule.
func verdictFor(v Verdict, rule, part, what string) Decision {
	d := Decision{Verdict: v, Rule: rule, Part: part}
	switch v {
	case Deny:
		d.Code = CodeDenied
		d.Reason = fmt.Sprintf("%s is denied by the permission rule %q; do not retry it or work around it: choose another approach, or ask the user to change the rule", what, rule)
	case Ask:
		d.Code = CodeApprovalRequired
		d.Reason = fmt.Sprintf("%s needs the user's approval (rule %q); in a non-interactive run it is refused: ask the user to allow it, or choose another approach", what, rule)
	case Allow:
		d.Reason = fmt.Sprintf("%s is allowed by the rule %q", what, rule)
	}
	return d
}

// DecidePath checks access to one path as the file tools do it: reads against read rules,
// writes against write and edit rules and the protected paths. Whole-tool rules are not
// consulted (use [Policy.Decide] for a tool call). Integrators of directory tools (ls, find,
// grep) may use it to filter what they list.
func (p *Policy) DecidePath(op Op, target string) Decision {
	tool := ToolRead
	if op == OpWrite {
		tool = ToolWrite
	}
	return p.decidePathRules(tool, op, target, false)
}

func (p *Policy) decidePath(toolName string, op Op, target string) Decision {
	return p.decidePathRules(toolName, op, target, true)
}

// decidePathRules checks a path; withWhole also applies whole-tool rules for toolName.
func (p *Policy) decidePathRules(toolName string, op Op, target string, withWhole bool) Decision {
	rel, abs := p.resolve(target, "")
	shown := target
	if rel != "" {
		shown = rel
	}
	what := fmt.Sprintf("%s %s", opVerb(op), shown)
	if op == OpWrite {
		if g, ok := p.isProtected(rel, abs); ok {
			return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: shown, Reason: protectedReason(shown, g)}
		}
	}
	for _, list := range []struct {
		rules []Rule
		v     Verdict
	}{{p.deny, Deny}, {p.ask, Ask}, {p.allow, Allow}} {
		for _, r := range list.rules {
			if withWhole && r.kind == kindTool && r.Tool == toolName {
				return verdictFor(list.v, r.Raw, shown, what)
			}
			if r.kind == kindPath && ruleCoversTool(r.Tool, toolName) && p.pathMatches(r, rel, abs, list.v != Allow) {
				return verdictFor(list.v, r.Raw, shown, what)
			}
		}
	}
	return Decision{Verdict: NoMatch, Part: shown, Reason: fmt.Sprintf("no rule matches %s", what)}
}

func opVerb(op Op) string {
	if op == OpWrite {
		return "writing"
	}
	return "reading"
}

func protectedReason(p, glob string) string {
	why := ""
	if w, ok := protectedWhy[glob]; ok {
		why = ", " + w
	}
	return fmt.Sprintf("%s is a protected path (%s%s): no tool or command may write it, whatever the rules say; leave it alone and change files elsewhere", p, glob, why)
}

// ruleCoversTool reports whether a path rule written for ruleTool applies to toolName:
// read(…) covers every reading tool (read, grep, find, ls), write(…) and edit(…) cover
// both writing tools; grep(…), find(…), ls(…) cover only themselves.
func ruleCoversTool(ruleTool, toolName string) bool {
	if ruleTool == toolName {
		return true
	}
	switch ruleTool {
	case ToolRead:
		return toolName == ToolGrep || toolName == ToolFind || toolName == ToolLs
	case ToolWrite, ToolEdit:
		return toolName == ToolWrite || toolName == ToolEdit
	}
	return false
}

// resolve turns a path as a tool or command receives it into a workspace-relative path (""
// when outside the workspace or unknown) and an absolute path ("" when unknown). cwd is the
// directory a command runs in, relative to the workspace or absolute ("" is the root).
func (p *Policy) resolve(target, cwd string) (rel, abs string) {
	// Mirror the file tools: unusual spaces become spaces, a leading "@" is dropped, "~" is
	// the home directory.
	target = strings.Map(func(r rune) rune {
		switch r {
		case '\u00A0', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
			'\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, target)
	target = strings.TrimPrefix(strings.TrimSpace(target), "@")
	if t := target; t == "~" || strings.HasPrefix(t, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			target = filepath.Join(home, strings.TrimPrefix(t, "~"))
		}
	}
	target = filepath.ToSlash(target)
	if target == "" {
		target = "."
	}
	if !path.IsAbs(target) && cwd != "" {
		target = path.Join(cwd, target)
	}
	if path.IsAbs(target) {
		abs = path.Clean(target)
		if p.dir != "" {
			ws := &tool.Workspace{Dir: filepath.FromSlash(p.dir)}
			if r, err := ws.Rel(filepath.FromSlash(abs)); err == nil {
				rel = filepath.ToSlash(r)
			}
		}
		return rel, abs
	}
	c := path.Clean(target)
	if c == ".." || strings.HasPrefix(c, "../") {
		if p.dir != "" {
			abs = path.Join(p.dir, c)
		}
		return "", abs
	}
	if p.dir != "" {
		abs = path.Join(p.dir, c)
	}
	return c, abs
}

// pathMatches matches a path rule against a resolved path; fold compares case-insensitively
// (deny and ask rules, so that .ENV on a case-insensitive file system is caught too).
func (p *Policy) pathMatches(r Rule, rel, abs string, fold bool) bool {
	if r.abs {
		return abs != "" && globMatch(r.glob, abs, fold)
	}
	return rel != "" && globMatch(r.glob, rel, fold)
}

func (p *Policy) isProtected(rel, abs string) (string, bool) {
	for _, g := range p.protected {
		if p.pathMatches(g, rel, abs, true) {
			return g.Raw, true
		}
	}
	return "", false
}

// ProtectedPaths is a compiled list of protected path globs: the matcher behind [Policy]'s
// protected paths, shared with the file tools so both refuse the same paths. It is
// immutable and safe for concurrent use.
type ProtectedPaths struct{ p *Policy }

// NewProtectedPaths compiles globs as [Config.Protected] does (nil means
// [DefaultProtected]; an empty non-nil slice protects nothing). dir is the absolute
// workspace directory; paths are matched relative to it, and absolute globs match absolute
// paths. Errors are *[Error] with [CodeBadRule].
func NewProtectedPaths(globs []string, dir string) (*ProtectedPaths, error) {
	p, err := New(Config{Protected: globs, Dir: dir})
	if err != nil {
		return nil, err
	}
	return &ProtectedPaths{p: p}, nil
}

// Match reports the glob protecting target (workspace-relative or absolute), matched
// case-insensitively, a glob also covering everything below what it matches.
func (pp *ProtectedPaths) Match(target string) (glob string, ok bool) {
	rel, abs := pp.p.resolve(target, "")
	return pp.p.isProtected(rel, abs)
}

// Check returns an *[Error] with [CodeProtectedPath] saying why when target is protected,
// and nil otherwise. shown is the path as the caller named it (used in the message; empty
// means target).
func (pp *ProtectedPaths) Check(target, shown string) error {
	g, ok := pp.Match(target)
	if !ok {
		return nil
	}
	if shown == "" {
		shown = target
	}
	return errorf(CodeProtectedPath, "%s", protectedReason(shown, g))
}

// EscapeGlob quotes the glob metacharacters of a literal path (\ * ? [ ] { }), so it can
// be listed among protected globs.
func EscapeGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		switch c {
		case '\\', '*', '?', '[', ']', '{', '}':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
