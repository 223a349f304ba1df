package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/tui"
)

// uiHost implements tui.Library: what /resume, /tree, /export, /permissions, /hooks and
// /skill:name read, computed as `rein session ls`, `rein session export` and the settings
// reader do.
var _ tui.Library = (*uiHost)(nil)

// Sessions lists the sessions of the workspace, newest first, as `rein session ls` does,
// with each one's first prompt.
func (h *uiHost) Sessions(context.Context) ([]tui.SessionSummary, error) {
	cwd := h.dir
	if real, err := realDir(cwd); err == nil {
		cwd = real
	}
	dirs, err := system.ListSessions(system.ProjectSessions(h.home, cwd))
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionSummary, 0, len(dirs))
	for _, d := range dirs {
		s := tui.SessionSummary{ID: d.ID, Dir: d.Dir, Updated: d.Updated}
		st, _, err := session.LoadAs(d.Dir, d.ID)
		if err != nil {
			s.Err = err.Error()
			out = append(out, s)
			continue
		}
		s.Name, s.Entries, s.CostUSD = st.Name(), len(st.Entries), st.Usage.Cost.Total
		for _, e := range st.Conversation() {
			if e.Message.Role == llm.RoleUser {
				s.FirstPrompt = e.Message.Text()
				break
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Tree lists the session's user and assistant entries in record order.
func (h *uiHost) Tree(_ context.Context, id, dir string) ([]tui.TreeEntry, error) {
	st, _, err := session.LoadAs(dir, id)
	if err != nil {
		return nil, err
	}
	onPath := map[string]bool{}
	for _, e := range st.Conversation() {
		onPath[e.ID] = true
	}
	var out []tui.TreeEntry
	for _, e := range st.Order {
		m := &e.Message
		if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
			continue
		}
		t := tui.TreeEntry{ID: e.ID, Parent: listedParent(st, e), Role: string(m.Role), Text: m.Text(), OnPath: onPath[e.ID], Time: e.Time}
		for _, c := range m.ToolCalls() {
			t.Tools = append(t.Tools, c.Name)
		}
		out = append(out, t)
	}
	return out, nil
}

// listedParent is the nearest ancestor of e that is a user or assistant entry ("" for none):
// tool results sit between an answer and the next prompt.
func listedParent(st *session.State, e *session.Entry) string {
	for p := st.Entries[e.Parent]; p != nil; p = st.Entries[p.Parent] {
		if p.Message.Role == llm.RoleUser || p.Message.Role == llm.RoleAssistant {
			return p.ID
		}
	}
	return ""
}

// Export writes the session as `rein session export` does (markdown, secrets redacted) to
// path, atomically; "" is rein-session-ID.md in the workspace.
func (h *uiHost) Export(_ context.Context, id, dir, path string) (string, string, error) {
	st, _, err := session.LoadAs(dir, id)
	if err != nil {
		return "", "", err
	}
	if path == "" {
		path = "rein-session-" + id + ".md"
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(h.dir, path)
	}
	var buf strings.Builder
	if err := writeMarkdown(&buf, st); err != nil {
		return "", "", err
	}
	text, notice, err := redactTranscript(buf.String(), false)
	if err != nil {
		return "", "", err
	}
	if err := atomicfile.Write(path, []byte(text), 0o600); err != nil {
		return "", "", fmt.Errorf("writing the export: %w", err)
	}
	return path, notice, nil
}

// settingsFiles are the settings files in force: the global one, and the project's when the
// project is trusted.
func (h *uiHost) settingsFiles(trusted bool) ([]string, []system.Settings, error) {
	paths := []string{filepath.Join(h.home, system.SettingsFile)}
	if trusted {
		paths = append(paths, filepath.Join(h.dir, ".rein", system.SettingsFile))
	}
	var sets []system.Settings
	for i, p := range paths {
		s, err := system.ReadSettings(p, i == 0)
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, s)
	}
	return paths, sets, nil
}

// Permissions lists the permission rules of each settings file in force.
func (h *uiHost) Permissions(trusted bool) ([]string, error) {
	paths, sets, err := h.settingsFiles(trusted)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, s := range sets {
		for _, l := range []struct {
			kind  string
			rules []string
		}{{"deny", s.Permissions.Deny}, {"ask", s.Permissions.Ask}, {"allow", s.Permissions.Allow}} {
			for _, r := range l.rules {
				out = append(out, fmt.Sprintf("  %-5s %s  (%s)", l.kind, r, paths[i]))
			}
		}
	}
	return out, nil
}

// Hooks lists the hooks in force — rein's settings, Claude Code's and plugins' — one a
// line, with the file that configured each.
func (h *uiHost) Hooks(trusted bool) ([]string, error) {
	entries, err := system.HooksInForce(system.Options{Dir: h.dir, Home: h.home, Getenv: h.e.getenv}, trusted)
	if err != nil {
		return nil, err
	}
	lines := hookLines(entries)
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return lines, nil
}

// maxSkillBytes bounds a skill pinned to a message.
const maxSkillBytes = 256 << 10

// Skill returns the full SKILL.md of the named skill the current system prompt lists.
func (h *uiHost) Skill(name string) (string, error) {
	path := h.skillPath(name)
	if path == "" {
		known := h.Skills()
		if len(known) == 0 {
			return "", errors.New("the system prompt lists no skills")
		}
		return "", fmt.Errorf("no skill %q is listed (listed: %s)", name, strings.Join(known, ", "))
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading the skill: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSkillBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the skill: %w", err)
	}
	if len(data) > maxSkillBytes {
		return "", fmt.Errorf("%s is larger than %d KiB: too large to pin to a message", path, maxSkillBytes>>10)
	}
	return string(data), nil
}

// Skills names the skills the current system prompt lists.
func (h *uiHost) Skills() []string {
	var out []string
	for _, s := range h.skillSections() {
		out = append(out, filepath.Base(filepath.Dir(s.Source)))
	}
	return out
}

func (h *uiHost) skillPath(name string) string {
	for _, s := range h.skillSections() {
		if filepath.Base(filepath.Dir(s.Source)) == name {
			return s.Source
		}
	}
	return ""
}

// skillSections are the system prompt's lines that list a skill (a skill's name is its
// directory's).
func (h *uiHost) skillSections() []contextpack.Section {
	h.mu.Lock()
	a := h.system
	h.mu.Unlock()
	if a == nil {
		return nil
	}
	var out []contextpack.Section
	for _, s := range a.Sections {
		if s.Name == contextpack.SectionSkills && s.Source != "" {
			out = append(out, s)
		}
	}
	return out
}
