package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
)

// libraryHost is a script host with a fixed library: the sessions and entries the picker
// and the tree show (fixed, so that the golden frames hold still), and what was asked of it.
type libraryHost struct {
	*scriptHost
	sessions []SessionSummary
	tree     []TreeEntry
	skill    string
}

func (h *libraryHost) Sessions(context.Context) ([]SessionSummary, error) { return h.sessions, nil }
func (h *libraryHost) Tree(context.Context, string, string) ([]TreeEntry, error) {
	return h.tree, nil
}
func (h *libraryHost) Export(context.Context, string, string, string) (string, string, error) {
	return "", "", errors.New("not in this test")
}
func (h *libraryHost) Permissions(bool) ([]string, error) {
	return []string{"  ask   write(*)  (settings.json)"}, nil
}
func (h *libraryHost) Hooks(bool) ([]string, error) { return nil, nil }
func (h *libraryHost) Skill(name string) (string, error) {
	if name != "notes" {
		return "", errors.New("no such skill")
	}
	return h.skill, nil
}
func (h *libraryHost) Skills() []string { return []string{"notes"} }

func startLibrary(t *testing.T, h *libraryHost) (*Model, *probe) {
	t.Helper()
	m, err := New(context.Background(), h, Options{Width: 80, Height: 24})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, startProgram(t, m)
}

// TestResumePickerFrame: /resume lists the other sessions with their first prompt, age,
// entries and cost, previews the selected one, and filters as the user types.
func TestResumePickerFrame(t *testing.T) {
	now := time.Now()
	h := &libraryHost{scriptHost: newScriptHost(t, "version: 1\nturns:\n  - text: ok\n", ""), sessions: []SessionSummary{
		{ID: "0193aaaa-1111", Dir: "/s/a", FirstPrompt: "fix the flaky test in ledger\nand explain why", Updated: now.Add(-3 * time.Hour), Entries: 12, CostUSD: 0.0412},
		{ID: "0193bbbb-2222", Dir: "/s/b", Name: "docs", FirstPrompt: "write the README section on sessions", Updated: now.Add(-50 * time.Hour), Entries: 4, CostUSD: 0.0031},
	}}
	m, tm := startLibrary(t, h)
	send(tm, "/resume")
	waitFor(t, tm, "Resume a session", "fix the flaky test")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	waitFor(t, tm, "name: docs")
	tm.Type("flaky")
	waitFor(t, tm, "1 of 1")
	if f := frame(m); strings.Contains(f, "write the README") {
		t.Errorf("the filter kept a session it does not match:\n%s", f)
	}
	finalFrame(t, m, tm)
}

const treeScenario = `version: 1
dialogs:
  - match: one
    turns: [{text: First answer.}]
  - match: two
    turns: [{text: Second answer.}]
`

// TestTreeForksAtAnEntry: /tree shows the session's entries with the branch summary of the
// selected one; Enter on the first answer continues in a new session that holds the
// conversation up to it, and the parent session is left as it was.
func TestTreeForksAtAnEntry(t *testing.T) {
	sh := newScriptHost(t, treeScenario, "")
	h := &libraryHost{scriptHost: sh}
	m, tm := startLibrary(t, h)
	send(tm, "one")
	waitFor(t, tm, "First answer.")
	waitIdle(t, m)
	send(tm, "two")
	waitFor(t, tm, "Second answer.")
	waitIdle(t, m)
	parent := m.current().SessionID
	ctx := m.e.runtime().Context()
	if len(ctx) != 4 {
		t.Fatalf("the session holds %d messages, want 4", len(ctx))
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local) // shown in local time: the same digits in every zone
	for i, msg := range ctx {
		h.tree = append(h.tree, TreeEntry{ID: msg.ID, Role: string(msg.Role), Text: msg.Text(), OnPath: true, Time: t0})
		if i > 0 {
			h.tree[i].Parent = ctx[i-1].ID
		}
	}
	send(tm, "/tree")
	waitFor(t, tm, "Session tree", "leaves nothing of the current branch out")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp})
	waitFor(t, tm, "leaves out 1 later prompts and 1 answers", "the branch's last answer: Second answer.")
	f := frame(m)
	for i, e := range h.tree { // frame() put <sessid> for the start that entry ids share with the session's
		f = strings.ReplaceAll(f, strings.Replace(e.ID, short(parent), "<sessid>", 1), "<entry"+string(rune('0'+i))+">")
	}
	golden.RequireEqual(t, f)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "continued from entry")
	if id := m.current().SessionID; id == parent || id == "" {
		t.Fatalf("the tree did not continue in a new session (now %q, parent %q)", id, parent)
	}
	got := m.e.runtime().Context()
	if len(got) != 2 || got[1].Text() != "First answer." {
		t.Errorf("the forked session holds %d messages (%v), want the two up to the first answer", len(got), got)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t)
}

// TestSkillIsPinnedToTheTurn: /skill:notes MESSAGE sends the skill's full text with the
// message, for that turn.
func TestSkillIsPinnedToTheTurn(t *testing.T) {
	h := &libraryHost{scriptHost: newScriptHost(t, "version: 1\nturns:\n  - text: Noted.\n", ""), skill: "---\nname: notes\ndescription: take notes\n---\nAlways write notes.txt."}
	m, tm := startLibrary(t, h)
	send(tm, "/skill:notes take notes please")
	waitFor(t, tm, "Noted.")
	waitIdle(t, m)
	ctx := m.e.runtime().Context()
	if len(ctx) == 0 || !strings.Contains(ctx[0].Text(), "Always write notes.txt.") || !strings.HasSuffix(ctx[0].Text(), "take notes please") {
		t.Errorf("the first message does not carry the skill and the message: %q", ctx[0].Text())
	}
	send(tm, "/skill:nope hi")
	waitFor(t, tm, "/skill:nope: no such skill")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t)
}
