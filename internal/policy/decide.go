package policy

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/strictjson"
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
	Code refusal.Code
	// Rule is the rule that decided, as written; empty when no rule did (a protected path,
	// an unanalysable line, no match).
	Rule string
	// Part is the simple command (bash) or path (file tools) the decision is about.
	Part string
	// Reason says why, and for Deny and Ask what to do.
	Reason string
}

// Err returns the refusal as an *[refusal.Error] for Deny and Ask, and nil otherwise.
func (d Decision) Err() error {
	if d.Verdict != Deny && d.Verdict != Ask {
		return nil
	}
	return &refusal.Error{Code: d.Code, Message: d.Reason}
}

// Config configures a [Policy].
type Config struct {
	Rules Rules
	// Protected lists path globs (workspace-relative, or absolute) that writes may never
	// touch, whatever the rules say; matched case-insensitively, a glob also covers
	// everything below what it matches (see internal/pathrule). Nil means
	// [pathrule.DefaultProtected]; an empty non-nil slice protects nothing.
	Protected []string
	// ReadProtected lists path globs (the syntax of Protected) that no tool or command may
	// read either, whatever the rules say: rein's home directory ($REIN_HOME: credentials,
	// trust decisions, sessions), should it lie inside the workspace or be named by a
	// command. Nil protects nothing. A read-protected path is not write-protected unless
	// Protected lists it too.
	ReadProtected []string
	// ReadExempt lists path globs inside ReadProtected that may be read all the same: the
	// bash tool's full-output files, which it tells the model to read.
	ReadExempt []string
	// Dir is the absolute workspace directory. Absolute paths inside it are matched as
	// workspace-relative paths; without it, only relative paths are.
	Dir string
	// Roots are further absolute directories the file tools work in (a run's additional
	// directories). A path inside one is also matched relative to it by the deny and ask
	// rules and by the relative protected paths (so **/.env and .git hold there); allow
	// rules match it by its absolute path only.
	Roots []string
}

// Policy is a compiled set of permission rules. It is immutable and safe for concurrent use.
type Policy struct {
	allow, ask, deny []Rule
	protected        *pathrule.ProtectedPaths
	readProtected    *pathrule.ProtectedPaths
	readExempt       *pathrule.ProtectedPaths
	dir              string
	roots            []string
}

// New compiles cfg. Every malformed rule is reported (an *[refusal.Error] with [CodeBadRule]).
func New(cfg Config) (*Policy, error) {
	p := &Policy{dir: filepath.ToSlash(filepath.Clean(cfg.Dir))}
	if cfg.Dir == "" {
		p.dir = ""
	} else if !filepath.IsAbs(cfg.Dir) {
		return nil, errorf(CodeBadRule, "workspace directory %q is not absolute", cfg.Dir)
	}
	for _, r := range cfg.Roots {
		if !filepath.IsAbs(r) {
			return nil, errorf(CodeBadRule, "additional directory %q is not absolute", r)
		}
		p.roots = append(p.roots, filepath.ToSlash(filepath.Clean(r)))
	}
	var problems []string
	compile := func(list []string) []Rule {
		var out []Rule
		for _, s := range list {
			r, err := ParseRule(s)
			if err != nil {
				problems = append(problems, err.(*refusal.Error).Message)
				continue
			}
			out = append(out, r)
		}
		return out
	}
	p.allow, p.ask, p.deny = compile(cfg.Rules.Allow), compile(cfg.Rules.Ask), compile(cfg.Rules.Deny)
	for _, r := range p.allow {
		if r.broadMCPAllow() {
			problems = append(problems, fmt.Sprintf("allow rule %q: a glob in an allow rule must follow a literal \"mcp__<server>__\" (\"mcp__github__*\"), so that it allows only servers you named", r.Raw))
		}
	}
	prot, err := pathrule.NewProtectedPaths(cfg.Protected, cfg.Dir)
	if err != nil {
		problems = append(problems, err.(*refusal.Error).Message)
	}
	p.protected = prot
	for _, x := range []struct {
		globs []string
		dst   **pathrule.ProtectedPaths
	}{{cfg.ReadProtected, &p.readProtected}, {cfg.ReadExempt, &p.readExempt}} {
		globs := x.globs
		if globs == nil {
			globs = []string{}
		}
		pp, err := pathrule.NewProtectedPaths(globs, cfg.Dir)
		if err != nil {
			problems = append(problems, err.(*refusal.Error).Message)
			continue
		}
		*x.dst = pp
	}
	if len(problems) > 0 {
		return nil, errorf(CodeBadRule, "%s", strings.Join(problems, "; "))
	}
	return p, nil
}

// pathTool is the access a file tool makes and whether its path argument may be omitted (the
// workspace root).
type pathTool struct {
	op       Op
	optional bool
}

// pathTools returns the file tool name's pathTool.
func pathTools(name string) (pathTool, bool) {
	switch name {
	case ToolRead:
		return pathTool{OpRead, false}, true
	case ToolGrep, ToolFind, ToolLs:
		return pathTool{OpRead, true}, true
	case ToolWrite, ToolEdit:
		return pathTool{OpWrite, false}, true
	}
	return pathTool{}, false
}

// Decide checks one tool call. args are the call's validated arguments. For bash the
// command line is analysed ([Policy.DecideCommand]); for the file tools the path
// ([Policy.DecidePath] plus the tool's own rules); for any other tool whole-tool rules, and
// the read and write path rules for every argument named like a path (see decideOther).
func (p *Policy) Decide(toolName string, args json.RawMessage) Decision {
	name := strings.ToLower(toolName)
	if name == ToolBash {
		cmd, err := stringArg(args, "command", false)
		if err != nil {
			return Decision{Verdict: Deny, Code: CodeBadArguments, Reason: fmt.Sprintf("bash arguments could not be read for the permission check (%v); send {\"command\": \"...\"}", err)}
		}
		return p.DecideCommand(cmd)
	}
	pt, isPath := pathTools(name)
	if !isPath {
		return p.decideOther(name, string(args))
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
			if r.kind == kindTool && r.toolMatches(name) {
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

// decidePath checks a file tool's call. edit also shows the file's lines (its diff), so it
// is judged as a read too: a read rule that denies or asks decides unless a write rule
// already denies.
func (p *Policy) decidePath(toolName string, op Op, target string) Decision {
	d := p.decidePathRules(toolName, op, target, true)
	if toolName != ToolEdit || d.Verdict == Deny {
		return d
	}
	if r := p.decidePathRules(ToolRead, OpRead, target, false); r.Verdict == Deny || r.Verdict == Ask && d.Verdict != Ask {
		return r
	}
	return d
}

// DeniesReads reports whether a read(…) rule denies or asks for some path: then a file that
// has more than one hard link cannot be judged by its name alone (its other names are
// unknown), and the file tools and the sandbox treat it with care (see doc.go).
func (p *Policy) DeniesReads() bool {
	for _, list := range [][]Rule{p.deny, p.ask} {
		for _, r := range list {
			if r.kind == kindPath && r.Tool == ToolRead {
				return true
			}
		}
	}
	return false
}

// readProtectedReason is the message refusing to read shown, a read-protected path.
func readProtectedReason(shown, glob string) string {
	return fmt.Sprintf("%s lies in a path no tool or command may read or write, whatever the rules say (%s: rein's home directory, with credentials, trust decisions and sessions); leave it alone", shown, glob)
}

// decidePathRules checks a path; withWhole also applies whole-tool rules for toolName.
func (p *Policy) decidePathRules(toolName string, op Op, target string, withWhole bool) Decision {
	rel, abs := p.resolve(target, "")
	shown := target
	if rel != "" {
		shown = rel
	}
	// inRoot is the path relative to the additional directory holding it, for the rules
	// that hold everywhere (deny, ask, protected paths).
	inRoot := rel
	if rel == "" {
		inRoot = p.rootRel(abs)
	}
	what := fmt.Sprintf("%s %s", opVerb(op), shown)
	if op == OpWrite {
		if g, ok := p.isProtected(inRoot, abs); ok {
			return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: shown, Reason: pathrule.Reason(shown, g)}
		}
	}
	if g, ok := p.isReadProtected(rel, abs); ok {
		return Decision{Verdict: Deny, Code: CodeProtectedPath, Part: shown, Reason: readProtectedReason(shown, g)}
	}
	for _, list := range []struct {
		rules []Rule
		v     Verdict
	}{{p.deny, Deny}, {p.ask, Ask}, {p.allow, Allow}} {
		for _, r := range list.rules {
			if withWhole && r.kind == kindTool && r.Tool == toolName {
				return verdictFor(list.v, r.Raw, shown, what)
			}
			at := rel
			if list.v != Allow {
				at = inRoot
			}
			if r.kind == kindPath && ruleCoversTool(r.Tool, toolName) && r.path.Match(at, abs, list.v != Allow) {
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

// resolve turns a path as a tool or command receives it into a workspace-relative path and
// an absolute path ([pathrule.Resolve]).
func (p *Policy) resolve(target, cwd string) (rel, abs string) {
	return pathrule.Resolve(p.dir, target, cwd)
}

// rootRel is abs relative to the additional directory holding it, "" when none does.
func (p *Policy) rootRel(abs string) string {
	if abs == "" {
		return ""
	}
	for _, r := range p.roots {
		if rel, ok := strings.CutPrefix(abs, r+"/"); ok {
			return rel
		}
	}
	return ""
}

// isReadProtected reports the read-protected glob covering a resolved path, unless the path
// is exempt.
func (p *Policy) isReadProtected(rel, abs string) (string, bool) {
	g, ok := p.readProtected.MatchResolved(rel, abs)
	if ok {
		if _, exempt := p.readExempt.MatchResolved(rel, abs); exempt {
			return "", false
		}
	}
	return g, ok
}

func (p *Policy) isProtected(rel, abs string) (string, bool) {
	return p.protected.MatchResolved(rel, abs)
}
