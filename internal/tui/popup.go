package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The completion popup sits above the editor while its last word completes to something:
// the "/…" commands or the "@…" files (one component for both). Up/Down choose, Tab takes
// the chosen one (Enter too, for a command, or once a file was chosen with Up/Down), Esc
// closes it until the editor changes — nothing is aborted.

// shownCompletions is how many completions the popup shows at once; maxCompletions how
// many of the best it lets the user move through.
const (
	shownCompletions = 5
	maxCompletions   = 50
)

// completion is one entry of the popup: what replaces the word being completed (insert),
// and for a command its arguments and one line of help.
type completion struct{ insert, args, help string }

// completions is the popup: word is what a completion replaces, items the best matches
// (at most maxCompletions), more how many matched beyond them, pick the chosen item.
type completions struct {
	word  string
	items []completion
	more  int
	pick  int
	// slash: the items are commands (Enter completes them too).
	slash bool
}

// popupState is the user's choice in the popup for the editor's text it was made for: a
// different text starts over (the first item chosen, the popup open).
type popupState struct {
	value  string
	pick   int
	moved  bool
	closed bool
}

// take is the first maxCompletions of ranked; the rest are counted in more.
func (c *completions) take(ranked []string) []string {
	n := min(len(ranked), maxCompletions)
	c.more = len(ranked) - n
	return ranked[:n]
}

// completions is the popup for the editor as it is now (no items: no popup).
func (m *Model) completions() completions {
	v := m.input.Value()
	if m.sel.value != v {
		m.sel = popupState{value: v}
	}
	if m.sel.closed {
		return completions{}
	}
	c := m.ranked(v)
	c.pick = min(m.sel.pick, max(len(c.items)-1, 0))
	return c
}

// popupKey handles a key while the popup shows c: Up/Down choose, Esc closes. False when
// the key is not the popup's.
func (m *Model) popupKey(s string, c completions) bool {
	if len(c.items) == 0 {
		return false
	}
	switch s {
	case "up", "ctrl+p":
		m.sel.pick = (c.pick - 1 + len(c.items)) % len(c.items)
	case "down", "ctrl+n":
		m.sel.pick = (c.pick + 1) % len(c.items)
	case "esc":
		m.sel.closed = true
		return true
	default:
		return false
	}
	m.sel.moved = true
	return true
}

// complete replaces the editor's word with the chosen completion; false when there is none.
func (m *Model) complete(c completions) bool {
	if len(c.items) == 0 {
		return false
	}
	v := m.input.Value()
	m.input.SetValue(v[:len(v)-len(c.word)] + c.items[c.pick].insert + " ")
	return true
}

// enterCompletes says whether Enter takes the chosen completion rather than sending: for a
// command not typed out whole (or one chosen with Up/Down), and for a file chosen with
// Up/Down.
func (m *Model) enterCompletes(c completions) bool {
	if len(c.items) == 0 {
		return false
	}
	if c.slash {
		return !c.exact() || m.sel.moved
	}
	return m.sel.moved
}

// enter handles Enter while the popup may show: it completes (and runs a command that takes
// no arguments) or submits.
func (m *Model) enter() tea.Cmd {
	c := m.completions()
	if !m.enterCompletes(c) {
		return m.submit(false)
	}
	it := c.items[c.pick]
	m.complete(c)
	if c.slash && it.args == "" {
		return m.submit(false) // nothing to add: run it
	}
	return nil
}

// popup is the popup's rows: a window of shownCompletions around the chosen item, marked
// "›", and how many more there are.
func (m *Model) popup(c completions) []string {
	st := m.st
	first := min(max(0, c.pick-shownCompletions+1), max(0, len(c.items)-shownCompletions))
	last := min(len(c.items), first+shownCompletions)
	var rows []string
	for i := first; i < last; i++ {
		it := c.items[i]
		row := "  " + st.key.Render(clean(it.insert))
		if i == c.pick {
			row = st.key.Render("› " + clean(it.insert))
		}
		if it.args != "" {
			row += " " + clean(it.args)
		}
		if it.help != "" {
			row += st.dim.Render(" — " + clean(it.help))
		}
		rows = append(rows, ansi.Truncate(row, m.width, "…"))
	}
	if hidden := len(c.items) - (last - first) + c.more; hidden > 0 {
		rows = append(rows, st.dim.Render(fmt.Sprintf("  … %d more (↑/↓ or type to narrow)", hidden)))
	}
	return rows
}

// exact says whether the word is one of its completions as typed.
func (c completions) exact() bool {
	for _, it := range c.items {
		if strings.EqualFold(it.insert, c.word) {
			return true
		}
	}
	return false
}
