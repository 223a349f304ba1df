package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/llm"
)

// thinkingLevels are the reasoning efforts /thinking accepts.
var thinkingLevels = []string{"off", "minimal", "low", "medium", "high"}

func (m *Model) cmdThinking(arg string) tea.Cmd {
	info := m.current()
	if arg == "" {
		m.thinking = !m.thinking
		level := info.Thinking
		if level == "" {
			level = "the configured default"
		}
		shown := "folded"
		if m.thinking {
			shown = "shown"
		}
		m.info(fmt.Sprintf("thinking: %s, %s (set with /thinking %s)", level, shown, strings.Join(thinkingLevels, "|")))
		return nil
	}
	if !slices.Contains(thinkingLevels, arg) {
		m.t.add(newNotice(fmt.Sprintf("/thinking %s: want one of %s", arg, strings.Join(thinkingLevels, ", ")), "error"))
		return nil
	}
	m.e.mu.Lock()
	old := m.e.thinking
	m.e.thinking = arg
	m.e.mu.Unlock()
	rt := m.e.runtime()
	req := Request{Mode: OpenAgain, SessionDir: info.SessionDir, Provider: info.Provider, Model: info.Model, Thinking: arg}
	if rt != nil && info.SessionDir == "" {
		req.History, req.Usage = rt.Context(), rt.Usage()
	}
	back := req
	back.Thinking = old
	if old == "" {
		back.Thinking = info.Thinking
	}
	return m.reopen(req, &back, "thinking "+arg)
}

func (m *Model) cmdResume(arg string) tea.Cmd {
	if arg != "" {
		return m.openSession(arg)
	}
	lib := m.e.library()
	if lib == nil {
		m.t.add(newNotice("/resume is not available here", "error"))
		return nil
	}
	list, err := lib.Sessions(m.ctx)
	if err != nil {
		m.t.add(newNotice("listing the sessions: "+err.Error(), "error"))
		return nil
	}
	current := m.current().SessionID
	var items []pickItem
	for _, s := range list {
		if s.ID == current {
			continue
		}
		items = append(items, resumeItem(s, time.Now()))
	}
	if len(items) == 0 {
		m.info("no other session of this workspace to resume")
		return nil
	}
	m.picker = &picker{kind: pickResume, title: "Resume a session (type to filter · Enter opens · Esc closes)", items: items}
	return nil
}

// resumeItem is a session in the /resume picker: its first prompt, age, size and cost.
func resumeItem(s SessionSummary, now time.Time) pickItem {
	first := oneLine(clean(s.FirstPrompt))
	if first == "" {
		first = "(no prompt yet)"
	}
	if s.Err != "" {
		first = "(unreadable: " + oneLine(clean(s.Err)) + ")"
	}
	label := fmt.Sprintf("%-8s  %6s  %4d entries  $%.4f  %s", short(s.ID), age(now.Sub(s.Updated)), s.Entries, s.CostUSD, first)
	preview := []string{"session " + s.ID, "updated " + age(now.Sub(s.Updated)) + " ago, " + fmt.Sprintf("%d entries, $%.4f", s.Entries, s.CostUSD)}
	if s.Name != "" {
		preview = append(preview, "name: "+clean(s.Name))
	}
	preview = append(preview, "first prompt:")
	for _, l := range strings.Split(clean(s.FirstPrompt), "\n") {
		preview = append(preview, "  "+l)
	}
	return pickItem{label: label, preview: preview, ref: s.Dir, filter: strings.ToLower(s.ID + " " + s.Name + " " + s.FirstPrompt)}
}

// age says how long ago briefly: 45s, 12m, 3h, 5d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// openSession continues the session ref names (an id or a directory) in place of this one.
func (m *Model) openSession(ref string) tea.Cmd {
	return m.reopen(Request{Mode: OpenResume, Ref: ref}, nil, "resumed")
}

func (m *Model) cmdFork(arg string) tea.Cmd {
	info := m.current()
	if info.SessionID == "" {
		m.t.add(newNotice("/fork needs a session (this conversation is in memory only)", "error"))
		return nil
	}
	ref := info.SessionID
	if arg != "" {
		ref += "@" + arg
	}
	return m.reopen(Request{Mode: OpenFork, Ref: ref}, nil, "forked "+short(info.SessionID))
}

func (m *Model) cmdTree(string) tea.Cmd {
	info, lib := m.current(), m.e.library()
	switch {
	case info.SessionID == "":
		m.t.add(newNotice("/tree needs a session (this conversation is in memory only)", "error"))
		return nil
	case lib == nil:
		m.t.add(newNotice("/tree is not available here", "error"))
		return nil
	}
	entries, err := lib.Tree(m.ctx, info.SessionID, info.SessionDir)
	if err != nil {
		m.t.add(newNotice("reading the session: "+err.Error(), "error"))
		return nil
	}
	items := treeItems(entries)
	if len(items) == 0 {
		m.info("the session has no entries yet")
		return nil
	}
	m.picker = &picker{kind: pickTree, title: "Session tree (Enter continues from the entry in a new session · Esc closes)", items: items, sel: len(items) - 1, session: info.SessionID}
	return nil
}

// treeItems lays the entries out as a tree (a child under its nearest listed ancestor) with
// the branch summary of each: what continuing from it keeps and leaves out.
func treeItems(entries []TreeEntry) []pickItem {
	byID := map[string]*TreeEntry{}
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	depth := map[string]int{}
	var items []pickItem
	for i, e := range entries {
		d := 0
		if p, ok := byID[e.Parent]; ok {
			d = depth[p.ID]
			if siblingsAfter(entries, i, e.Parent) || !e.OnPath && p.OnPath {
				d++ // a branch point: the other branch is indented
			}
		}
		depth[e.ID] = d
		mark := "○"
		if e.OnPath {
			mark = "●"
		}
		role := "you"
		if e.Role == string(llm.RoleAssistant) {
			role = "ai"
		}
		text := oneLine(clean(e.Text))
		if len(e.Tools) > 0 {
			text = strings.TrimSpace(text + " [" + strings.Join(e.Tools, ", ") + "]")
		}
		label := fmt.Sprintf("%s%s %-3s %s", strings.Repeat("  ", d), mark, role, text)
		items = append(items, pickItem{label: label, ref: e.ID, preview: branchSummary(entries, i)})
	}
	return items
}

// siblingsAfter says another entry after i has the same parent (a fork in the tree).
func siblingsAfter(entries []TreeEntry, i int, parent string) bool {
	for _, e := range entries[i+1:] {
		if e.Parent == parent {
			return true
		}
	}
	return false
}

// branchSummary says what continuing from entries[i] keeps and what of the current branch it
// leaves out.
func branchSummary(entries []TreeEntry, i int) []string {
	e := entries[i]
	out := []string{fmt.Sprintf("entry %s (%s, %s)", e.ID, e.Role, e.Time.Local().Format(time.DateTime))}
	kept := 0
	for id := e.ID; id != ""; {
		var p *TreeEntry
		for j := range entries {
			if entries[j].ID == id {
				p = &entries[j]
				break
			}
		}
		if p == nil {
			break
		}
		kept++
		id = p.Parent
	}
	prompts, answers, tools, last := 0, 0, map[string]int{}, ""
	if e.OnPath {
		for _, later := range entries[i+1:] {
			if !later.OnPath {
				continue
			}
			if later.Role == string(llm.RoleUser) {
				prompts++
			} else {
				answers++
				last = later.Text
			}
			for _, t := range later.Tools {
				tools[t]++
			}
		}
	}
	out = append(out, fmt.Sprintf("continuing here starts a new session with the %d messages up to this one;", kept))
	if prompts+answers == 0 {
		out = append(out, "it leaves nothing of the current branch out")
	} else {
		names := make([]string, 0, len(tools))
		for t, n := range tools {
			names = append(names, fmt.Sprintf("%s×%d", t, n))
		}
		slices.Sort(names)
		line := fmt.Sprintf("it leaves out %d later prompts and %d answers of the current branch", prompts, answers)
		if len(names) > 0 {
			line += " (tools: " + strings.Join(names, ", ") + ")"
		}
		out = append(out, line)
		if last != "" {
			out = append(out, "the branch's last answer: "+oneLine(clean(last)))
		}
	}
	out = append(out, "", oneLine(clean(e.Text)))
	return out
}

func (m *Model) cmdExport(arg string) tea.Cmd {
	info, lib := m.current(), m.e.library()
	switch {
	case info.SessionID == "":
		m.t.add(newNotice("/export needs a session (this conversation is in memory only)", "error"))
		return nil
	case lib == nil:
		m.t.add(newNotice("/export is not available here", "error"))
		return nil
	}
	path, redacted, err := lib.Export(m.ctx, info.SessionID, info.SessionDir, arg)
	if err != nil {
		m.t.add(newNotice("export: "+err.Error(), "error"))
		return nil
	}
	text := "exported the session to " + path
	if redacted != "" {
		text += " (" + redacted + ")"
	}
	m.info(text)
	return nil
}

func (m *Model) cmdPermissions(string) tea.Cmd {
	lib := m.e.library()
	if lib == nil {
		m.t.add(newNotice("/permissions is not available here", "error"))
		return nil
	}
	lines, err := lib.Permissions(m.current().Trusted)
	if err != nil {
		m.t.add(newNotice("reading the settings: "+err.Error(), "error"))
		return nil
	}
	if len(lines) == 0 {
		lines = []string{"no permission rules: every tool call runs (see the README's Permission rules)"}
	}
	m.e.mu.Lock()
	var session []string
	for k := range m.e.allowed {
		session = append(session, fmt.Sprintf("  allowed for this UI session: %s %s", k[0], oneLine(clean(k[1]))))
	}
	m.e.mu.Unlock()
	slices.Sort(session)
	m.info("permissions:\n" + strings.Join(append(lines, session...), "\n"))
	return nil
}

func (m *Model) cmdHooks(string) tea.Cmd {
	lib := m.e.library()
	if lib == nil {
		m.t.add(newNotice("/hooks is not available here", "error"))
		return nil
	}
	lines, err := lib.Hooks(m.current().Trusted)
	if err != nil {
		m.t.add(newNotice("reading the settings: "+err.Error(), "error"))
		return nil
	}
	if len(lines) == 0 {
		lines = []string{"no command hooks (see the README's Hooks)"}
	}
	m.info("hooks:\n" + strings.Join(lines, "\n"))
	return nil
}

// cmdSkill sends message with the skill's full text pinned to it, for that turn.
func (m *Model) cmdSkill(name, message string) tea.Cmd {
	lib := m.e.library()
	if lib == nil {
		m.t.add(newNotice("/skill: is not available here", "error"))
		return nil
	}
	text, err := lib.Skill(name)
	if err != nil {
		m.t.add(newNotice(fmt.Sprintf("/skill:%s: %s", name, err.Error()), "error"))
		return nil
	}
	if message == "" {
		message = "Follow the skill " + name + "."
	}
	return m.send(pinSkill(name, text, message), false)
}

// pinSkill is the user message that carries a skill's full text before the user's own.
func pinSkill(name, text, message string) string {
	return fmt.Sprintf("<skill name=%q>\n%s\n</skill>\n\n%s", name, strings.TrimSpace(text), message)
}
