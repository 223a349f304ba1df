package pathrule

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/refusal"
)

// The codes of the refusals this package and the protected-path checks built on it make
// (*[refusal.Error]). Codes are stable strings, never renamed once released.
const (
	// CodeProtectedPath: the call would write to a protected path (.git, .rein policy files…).
	CodeProtectedPath refusal.Code = "policy.protected_path"
	// CodeHardLinked: a file tool would write a file that has more than one hard link, so
	// the write would also change names of it elsewhere (possibly outside the workspace);
	// or, while read rules deny paths, read one, whose other names may be denied.
	CodeHardLinked refusal.Code = "policy.hard_linked"
	// CodeBadRule: a path glob (of a permission rule or a protected path) is malformed.
	CodeBadRule refusal.Code = "policy.bad_rule"
)

// DefaultProtected lists the workspace paths no tool or command may write, whatever the
// rules say: git internals (a .git directory and everything in it, or a worktree's .git
// file, also in nested repositories) and rein's project policy directory .rein
// (settings.json, SYSTEM.md, APPEND_SYSTEM.md, skills/…, also below the root, where a run
// started in that directory would read it), and the other files that make a later run
// execute or obey something: .claude (settings with hooks, commands, agents in the shape rein
// reads), .mcp.json (MCP servers, started as commands), .agents/skills (skills loaded as
// instructions).
var DefaultProtected = []string{"**/.git", "**/.rein", "**/.claude", "**/.mcp.json", "**/.agents/skills"}

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
	"**/.claude":             "agent settings, hooks and commands a later run may load and execute: only the user changes them",
	"**/.mcp.json":           "MCP server definitions, started as commands by a later run: only the user changes them",
	"**/.agents/skills":      "skills a later run loads as instructions: only the user changes them",
	"**/ledger.jsonl":        "a rein session ledger: the record of what happened, written only by rein",
	"**/ledger.jsonl.torn-*": "evidence kept by a ledger repair, written only by rein",
	"**/ledger.lock":         "a rein session ledger's lock, held only by rein",
	"**/blobs/sha256":        "a content-addressed store of rein's ledger payloads or artifacts, written only by rein",
}

// Reason is the message refusing a write to shown, protected by glob: what the path is
// (for the default globs), and that it must be left alone.
func Reason(shown, glob string) string {
	why := ""
	if w, ok := protectedWhy[glob]; ok {
		why = ", " + w
	}
	return fmt.Sprintf("%s is a protected path (%s%s): no tool or command may write it, whatever the rules say; leave it alone and change files elsewhere", shown, glob, why)
}

// ProtectedPaths is a compiled list of protected path globs: the one matcher behind the
// permission rules' protected paths (internal/policy) and the file tools' (internal/tool/
// fstool), so both refuse the same paths. It is immutable and safe for concurrent use.
type ProtectedPaths struct {
	dir   string // slash form, or ""
	globs []Glob
}

// NewProtectedPaths compiles globs (workspace-relative, or absolute): nil means
// [DefaultProtected]; an empty non-nil slice protects nothing. dir is the absolute workspace
// directory ("" for none); paths are matched relative to it, and absolute globs match
// absolute paths. Every malformed glob is reported in one *[refusal.Error] with
// [CodeBadRule].
func NewProtectedPaths(globs []string, dir string) (*ProtectedPaths, error) {
	pp := &ProtectedPaths{}
	if dir != "" {
		if !filepath.IsAbs(dir) {
			return nil, refusal.Errorf(CodeBadRule, "workspace directory %q is not absolute", dir)
		}
		pp.dir = filepath.ToSlash(filepath.Clean(dir))
	}
	if globs == nil {
		globs = DefaultProtected
	}
	var problems []string
	for _, g := range globs {
		glob, err := Compile(strings.TrimSpace(g))
		if err != nil || strings.TrimSpace(g) == "" {
			problems = append(problems, fmt.Sprintf("protected path %q: %v", g, err))
			continue
		}
		glob.raw = g
		pp.globs = append(pp.globs, glob)
	}
	if len(problems) > 0 {
		return nil, refusal.Errorf(CodeBadRule, "%s", strings.Join(problems, "; "))
	}
	return pp, nil
}

// Globs returns the compiled globs, in the order given. The caller must not change the
// slice.
func (pp *ProtectedPaths) Globs() []Glob { return pp.globs }

// MatchResolved reports the glob (as written) protecting a path already resolved by
// [Resolve], matched case-insensitively.
func (pp *ProtectedPaths) MatchResolved(rel, abs string) (glob string, ok bool) {
	for _, g := range pp.globs {
		if g.Match(rel, abs, true) {
			return g.raw, true
		}
	}
	return "", false
}

// Match reports the glob protecting target (workspace-relative or absolute), matched
// case-insensitively, a glob also covering everything below what it matches.
func (pp *ProtectedPaths) Match(target string) (glob string, ok bool) {
	return pp.MatchResolved(Resolve(pp.dir, target, ""))
}

// Check returns an *[refusal.Error] with [CodeProtectedPath] saying why when target is
// protected, and nil otherwise. shown is the path as the caller named it (used in the
// message; empty means target).
func (pp *ProtectedPaths) Check(target, shown string) error {
	g, ok := pp.Match(target)
	if !ok {
		return nil
	}
	if shown == "" {
		shown = target
	}
	return refusal.Errorf(CodeProtectedPath, "%s", Reason(shown, g))
}
