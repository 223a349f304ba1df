package system

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// CodeSkillTools: a call a skill's allowed-tools does not allow, while the skill is active.
const CodeSkillTools refusal.Code = "skill_tools"

// A user invokes a skill by starting a prompt with "/NAME" (NAME is the skill's name or its
// directory's), followed by optional arguments: the prompt sent — and recorded — is the
// skill's instructions (the SKILL.md body, $ARGUMENTS and ${CLAUDE_SKILL_DIR} substituted)
// wrapped with its name and directory, then the arguments. Skills with
// disable-model-invocation can be invoked so (they are only kept out of the model's index);
// skills with user-invocable: false cannot. A "/word" naming no skill is sent as written.
//
// The invoked skill is active for that run — from the prompt until the run ends (Runtime.Begin's
// run function returns) — and only that run: while it is active, its allowed-tools are a
// restriction, enforced by skillGate in front of the permission gate: a call they do not
// allow is refused (CodeSkillTools). A skill the model reads on its own is never active: rein
// cannot tell that the model follows it.

// openSkillDirs keeps the skills of asm for invocations and opens the skill directories
// outside the workspace as the read tool's read-only roots (the sandbox shows them too).
func (rt *Runtime) openSkillDirs(asm *contextpack.Assembly) {
	rt.skills = asm.Skills
	for _, d := range asm.SkillDirs {
		if err := rt.Workspace.AddReadOnly(d); err != nil {
			rt.notice(fmt.Sprintf("skill directory %s is not readable by the read tool: %v", d, err))
			continue
		}
		rt.skillDirs = append(rt.skillDirs, d)
	}
}

// openExtraDirs opens the additional directories as the workspace's extra roots: the file
// tools read and write them, confined as the workspace is.
func (rt *Runtime) openExtraDirs(dirs []AdditionalDir) {
	for _, d := range dirs {
		if err := rt.Workspace.AddExtra(d.Path); err != nil {
			rt.notice(fmt.Sprintf("additional directory %s (%s) is not open to the file tools: %v", d.Path, d.From, err))
			continue
		}
		rt.extraDirs = append(rt.extraDirs, d.Path)
	}
}

// invokedSkill returns the user-invocable skill named by a prompt starting with "/NAME", and
// the arguments after the name.
func invokedSkill(skills []contextpack.Skill, text string) (*contextpack.Skill, string, bool) {
	if !strings.HasPrefix(text, "/") {
		return nil, "", false
	}
	name, args, _ := strings.Cut(text[1:], " ")
	name, rest, _ := strings.Cut(name, "\n")
	if rest != "" {
		args = rest + " " + args
	}
	if name == "" {
		return nil, "", false
	}
	for i := range skills {
		s := &skills[i]
		// A plugin's skill answers only to its namespaced name, as in Claude Code.
		if s.UserInvocable && (s.Name == name || s.Plugin == "" && dirBase(s.Dir) == name) {
			return s, strings.TrimSpace(args), true
		}
	}
	return nil, "", false
}

func dirBase(dir string) string { return filepath.Base(dir) }

// expandSkill renders the prompt of an invocation of s with args.
func expandSkill(s *contextpack.Skill, args string) (string, error) {
	full, err := contextpack.ReadSkillBody(s.Path)
	if err != nil {
		return "", fmt.Errorf("%w: skill %s: %w", ErrConfig, s.Name, err)
	}
	body := strings.TrimSpace(full.Body)
	hasArgs := strings.Contains(body, "$ARGUMENTS")
	body = strings.ReplaceAll(strings.ReplaceAll(body, "$ARGUMENTS", args), "${CLAUDE_SKILL_DIR}", s.Dir)
	var b strings.Builder
	fmt.Fprintf(&b, "<skill name=%q path=%q>\n", s.Name, s.Path)
	fmt.Fprintf(&b, "The user invoked the skill %s. Follow its instructions below; resolve the relative paths they mention against %s.\n", s.Name, s.Dir)
	if len(s.AllowedTools) > 0 {
		fmt.Fprintf(&b, "While it runs, only these tools may be used: %s.\n", strings.Join(s.AllowedTools, " "))
	}
	fmt.Fprintf(&b, "\n%s\n</skill>\n", body)
	if args != "" && !hasArgs {
		fmt.Fprintf(&b, "\n%s\n", args)
	}
	return b.String(), nil
}

// invoke turns a prompt invoking a skill into the skill's prompt and the restriction its
// allowed-tools make; any other prompt comes back as it is, with no active skill.
func (rt *Runtime) invoke(prompt llm.Message) (llm.Message, *skillRun, error) {
	if len(prompt.Content) != 1 || prompt.Content[0].Type != llm.PartText {
		return prompt, nil, nil
	}
	s, args, ok := invokedSkill(rt.skills, prompt.Content[0].Text)
	if !ok {
		return prompt, nil, nil
	}
	text, err := expandSkill(s, args)
	if err != nil {
		return prompt, nil, err
	}
	run := &skillRun{name: s.Name}
	if len(s.AllowedTools) > 0 {
		rules, ignored := skillRules(s.AllowedTools)
		for _, e := range ignored {
			rt.notice(fmt.Sprintf("skill %s: allowed-tools entry %q names no rein tool or pattern; calls it would allow are refused while the skill runs", s.Name, e))
		}
		pol, err := policy.New(policy.Config{Rules: policy.Rules{Allow: rules}, Dir: rt.Workspace.Dir, Protected: []string{}})
		if err != nil {
			return prompt, nil, fmt.Errorf("%w: skill %s: allowed-tools: %w", ErrConfig, s.Name, err)
		}
		run.allow, run.rules = pol, rules
	}
	out := prompt
	out.Content = []llm.Part{llm.Text(text)}
	return out, run, nil
}

// skillTool maps a tool name of allowed-tools (Claude Code's and rein's, lower-cased) to rein's.
func skillTool(name string) (string, bool) {
	switch name {
	case "bash":
		return policy.ToolBash, true
	case "read":
		return policy.ToolRead, true
	case "write":
		return policy.ToolWrite, true
	case "edit", "multiedit", "notebookedit":
		return policy.ToolEdit, true
	case "grep":
		return policy.ToolGrep, true
	case "glob", "find":
		return policy.ToolFind, true
	case "ls":
		return policy.ToolLs, true
	}
	return "", false
}

// skillRules translates allowed-tools entries into rein permission rules: tool names are
// mapped (Glob is find, MultiEdit is edit), Claude Code's legacy "cmd:*" suffix becomes
// "cmd *". Entries naming no rein tool, or whose pattern rein cannot read, are returned as
// ignored.
func skillRules(entries []string) (rules, ignored []string) {
	for _, e := range entries {
		name, pattern, hasPattern := strings.Cut(e, "(")
		tool, ok := skillTool(strings.ToLower(strings.TrimSpace(name)))
		if !ok {
			ignored = append(ignored, e)
			continue
		}
		r := tool
		if hasPattern {
			pattern = strings.TrimSuffix(strings.TrimSpace(pattern), ")")
			if tool == policy.ToolBash && strings.HasSuffix(pattern, ":*") {
				pattern = strings.TrimSuffix(pattern, ":*") + " *"
			}
			r = tool + "(" + pattern + ")"
		}
		if _, err := policy.ParseRule(r); err != nil {
			ignored = append(ignored, e)
			continue
		}
		rules = append(rules, r)
	}
	return rules, ignored
}

// skillRun is the skill active during one run.
type skillRun struct {
	name string
	// allow holds the allowed-tools rules; nil when the skill restricts nothing.
	allow *policy.Policy
	rules []string
}

// activeSkill is the skill active in the run in progress (none between runs).
type activeSkill struct {
	mu  sync.Mutex
	run *skillRun
}

func (a *activeSkill) set(r *skillRun) {
	a.mu.Lock()
	a.run = r
	a.mu.Unlock()
}

func (a *activeSkill) current() *skillRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.run
}

// skillGate refuses, while a skill with allowed-tools is active, every call they do not
// allow; then the permission gate decides as always (a skill never widens what the rules
// allow).
type skillGate struct {
	rt   *Runtime
	next kernel.Gate
}

// Check implements kernel.Gate.
func (g *skillGate) Check(ctx context.Context, call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
	if r := g.rt.active.current(); r != nil && r.allow != nil {
		if d := r.allow.Decide(spec.Name, args); d.Verdict != policy.Allow {
			allowed := "no tool"
			if len(r.rules) > 0 {
				allowed = strings.Join(slices.Clone(r.rules), ", ")
			}
			return &refusal.Error{Code: CodeSkillTools, Message: fmt.Sprintf(
				"the skill %s, which the user invoked for this run, allows only %s (its allowed-tools); this %s call is not among them: do the task with those tools, or tell the user what else you need",
				r.name, allowed, spec.Name)}
		}
	}
	return g.next.Check(ctx, call, spec, args)
}
