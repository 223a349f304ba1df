package contextpack

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ToolLine is one entry of the tool list.
type ToolLine struct {
	Name    string
	Snippet string
}

// Inputs are the explicit inputs of an assembly. Together with the files [Load] reads they
// decide the prompt byte for byte.
type Inputs struct {
	// Dir is the working directory: absolute and symlink-resolved.
	Dir string
	// Root is the project root of Dir, [ProjectRoot](Dir), when the caller found it
	// already; "" has Load find it.
	Root string
	// Home is $REIN_HOME, for the global context file, SYSTEM.md, APPEND_SYSTEM.md and skills;
	// "" reads nothing global.
	Home string
	// UserHome is the user's home directory, for ~/.claude/CLAUDE.md, ~/.agents/skills,
	// ~/.claude/skills and "~/" in imports; "" reads none of them.
	UserHome string
	// Hidden are absolute paths the bash tool's sandbox hides (nil without a sandbox): a skill
	// below one is listed only when the read tool is offered.
	Hidden []string
	// Tools are the tools offered, in order.
	Tools []ToolLine
	// Date is shown as YYYY-MM-DD.
	Date time.Time
	// ProjectTrusted lets project files that configure or extend rein load (see [Load]).
	ProjectTrusted bool
	// GateContextFiles puts the project's context files (AGENTS.md, CLAUDE.md) behind
	// ProjectTrusted too; the global one in Home always loads.
	GateContextFiles bool
	// Plugins are the installed Claude Code plugins the run enables, whose skills load after
	// every skills directory's (see [Load]). Deciding which are enabled is the caller's
	// business.
	Plugins []Plugin
}

// Plugin is a Claude Code plugin whose skills load: Name is its namespace (the manifest's
// name), Dir its directory.
type Plugin struct {
	Name, Dir string
}

// Section names.
const (
	SectionSystem      = "system"      // the default prompt, or SYSTEM.md
	SectionAppend      = "append"      // APPEND_SYSTEM.md
	SectionContext     = "context"     // the project context heading, then one per context file
	SectionSkills      = "skills"      // the skills heading, then one per skill
	SectionEnvironment = "environment" // date and working directory
	SectionTool        = "tool"        // a tool's schema (see [ToolSection])
	SectionMessage     = "message"     // a conversation message (see [MessageSection])
	SectionPrompt      = "prompt"      // the new user prompt
)

// Section is one part of what a request carries.
type Section struct {
	Name string `json:"name"`
	// Source is the file the text comes from, a tool name or a message role; "" for text rein
	// writes itself.
	Source string `json:"source,omitempty"`
	// ImportedBy is the context file that imported Source with @path ("" when none did).
	ImportedBy string `json:"importedBy,omitempty"`
	// Text is the exact text the section contributes.
	Text   string `json:"-"`
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
}

// Assembly is an assembled system prompt: Prompt is the concatenation of the sections' texts.
type Assembly struct {
	Sections    []Section
	Prompt      string
	Diagnostics []string
	// Untrusted are the project files the trust gate kept out (see [Sources].Untrusted).
	Untrusted []string
	// Estimator names how Tokens were estimated; "" when they were not.
	Estimator string
	// Skills are the skills loaded: those in the index, those kept out of it by
	// disable-model-invocation (the user may invoke them), in discovery order.
	Skills []Skill
	// PluginDirs are the plugin directories found in the skills directories (see
	// [Sources].PluginDirs).
	PluginDirs []string
	// SkillDirs are the directories of Skills that lie outside the working directory
	// (symbolic links resolved): the read tool reads them, and a sandbox shows them, read-only.
	SkillDirs []string
}

// Build loads the sources of in and assembles them: Assemble(in, Load(in), est).
func Build(in Inputs, est Estimator) *Assembly { return Assemble(in, Load(in), est) }

// Assemble renders the system prompt from in and src. It reads nothing and is deterministic:
// the same arguments give the same bytes. est may be nil (no token estimates).
//
// Layout, each part separated from the previous one by a blank line:
//
//	default prompt (role, tools with one-line snippets, guidelines) — or SYSTEM.md
//	APPEND_SYSTEM.md
//	# Project context   — one "## PATH" subsection per context file, outermost first
//	# Skills            — how to use them, then "- NAME: DESCRIPTION (PATH)", sorted by name
//	Current date: YYYY-MM-DD / Current working directory: DIR
//
// Paths inside the working directory are shown relative to it, others absolute. A skill is
// listed only if a tool offered can read its SKILL.md: read for files inside the working
// directory, bash for any file; a skill no tool can read is left out with a diagnostic.
func Assemble(in Inputs, src *Sources, est Estimator) *Assembly {
	a := &Assembly{Diagnostics: slices.Clone(src.Diagnostics), Untrusted: slices.Clone(src.Untrusted), Skills: slices.Clone(src.Skills),
		PluginDirs: slices.Clone(src.PluginDirs)}
	for _, s := range src.Skills {
		if !within(s.Dir, in.Dir) && !slices.Contains(a.SkillDirs, s.Dir) {
			a.SkillDirs = append(a.SkillDirs, s.Dir)
		}
	}
	if est != nil {
		a.Estimator = est.Name()
	}
	add := func(name, source, text string) *Section {
		s := Section{Name: name, Source: source, Text: text, Bytes: len(text)}
		if est != nil {
			s.Tokens = est.Tokens(text)
		}
		a.Sections = append(a.Sections, s)
		return &a.Sections[len(a.Sections)-1]
	}
	const sep = "\n" // the blank line before every part but the first
	if src.System != nil {
		add(SectionSystem, src.System.Path, withNewline(src.System.Text)+truncNotice(src.System))
	} else {
		add(SectionSystem, "", defaultPrompt(in.Tools))
	}
	if src.Append != nil {
		add(SectionAppend, src.Append.Path, sep+withNewline(src.Append.Text)+truncNotice(src.Append))
	}
	if len(src.Context) > 0 {
		add(SectionContext, "", sep+"# Project context\n\n"+
			"Instructions from the project's context files follow, outermost first; where they disagree, the later, more specific file wins.\n")
		for i := range src.Context {
			f := &src.Context[i]
			head := DisplayPath(in.Dir, f.Path)
			if f.ImportedBy != "" {
				head += " (imported by " + DisplayPath(in.Dir, f.ImportedBy) + ")"
			}
			add(SectionContext, f.Path, fmt.Sprintf("\n## %s\n\n%s%s", head, withNewline(f.Text), truncNotice(f))).ImportedBy = f.ImportedBy
		}
	}
	if skills, how := usableSkills(in, src.Skills, &a.Diagnostics); len(skills) > 0 {
		add(SectionSkills, "", sep+"# Skills\n\n"+
			"A skill is a file of instructions for one kind of task. When a task matches a skill's description, "+
			how+" before you start, and resolve the relative paths it mentions against the skill's directory.\n\n")
		for _, s := range skills {
			add(SectionSkills, s.Path, fmt.Sprintf("- %s: %s (%s)\n", s.Name, oneLine(s.Description), DisplayPath(in.Dir, s.Path)))
		}
	}
	add(SectionEnvironment, "", fmt.Sprintf("%sCurrent date: %s\nCurrent working directory: %s\n", sep, in.Date.Format("2006-01-02"), in.Dir))

	var b strings.Builder
	for _, s := range a.Sections {
		b.WriteString(s.Text)
	}
	a.Prompt = b.String()
	return a
}

// defaultPrompt is rein's own prompt: small, stable, and specific about the tools offered.
func defaultPrompt(tools []ToolLine) string {
	var b strings.Builder
	b.WriteString("You are an expert coding agent working in a software project. You read files, run commands, and edit code to complete the user's request, then report briefly what you did.\n")
	if len(tools) == 0 {
		b.WriteString("\nNo tools are available in this session: answer from what you are given.\n")
		return b.String()
	}
	b.WriteString("\nAvailable tools:\n")
	has := map[string]bool{}
	for _, t := range tools {
		has[t.Name] = true
		fmt.Fprintf(&b, "- %s: %s\n", t.Name, t.Snippet)
	}
	b.WriteString("\nGuidelines:\n")
	switch {
	case has["edit"] && has["read"]:
		b.WriteString("- Read a file before you edit it; make edits with exact, unique oldText.\n")
	case has["edit"]:
		b.WriteString("- Make edits with exact, unique oldText.\n")
	}
	if has["bash"] && (has["grep"] || has["find"] || has["ls"]) {
		b.WriteString("- Prefer grep, find and ls over bash to explore files.\n")
	}
	b.WriteString("- Prefer small, verifiable steps: run the tests after a change.\n")
	if has["read"] || has["write"] || has["edit"] || has["grep"] || has["find"] || has["ls"] {
		b.WriteString("- Paths are relative to the working directory; file tools cannot leave it.\n")
	}
	b.WriteString("- Be concise, and name the files you worked on.\n")
	return b.String()
}

// usableSkills returns the skills of the model's index, sorted by name, and how the prompt
// tells the model to read them. A skill with disable-model-invocation is not in the index. The
// read tool reads every skill (those outside the working directory through read-only roots);
// without it, bash prints them, unless the sandbox hides the skill; a skill no offered tool can
// read is left out with a diagnostic.
func usableSkills(in Inputs, skills []Skill, diags *[]string) ([]Skill, string) {
	var hasRead, hasBash bool
	for _, t := range in.Tools {
		hasRead = hasRead || t.Name == "read"
		hasBash = hasBash || t.Name == "bash"
	}
	var out []Skill
	for _, s := range skills {
		hidden := slices.ContainsFunc(in.Hidden, func(h string) bool { return within(s.Path, h) })
		switch {
		case s.DisableModelInvocation:
		case hasRead, hasBash && !hidden:
			out = append(out, s)
		case hasBash:
			*diags = append(*diags, fmt.Sprintf("%s: skill not listed: the sandbox hides it from bash and the read tool is not offered", s.Path))
		default:
			*diags = append(*diags, fmt.Sprintf("%s: skill not listed: neither the read nor the bash tool is offered", s.Path))
		}
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	how := "read its SKILL.md with the read tool"
	if !hasRead {
		how = "print its SKILL.md with bash (cat PATH)"
	}
	return out, how
}

// DisplayPath shows p as the prompt does: relative to dir when it lies inside, absolute
// otherwise, with forward slashes.
func DisplayPath(dir, p string) string {
	if within(p, dir) {
		if r, err := filepath.Rel(dir, p); err == nil {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(p)
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func truncNotice(f *File) string {
	if !f.Truncated {
		return ""
	}
	return fmt.Sprintf("[rein: file truncated: %d of its %d bytes are shown]\n", len(f.Text), f.Size)
}
