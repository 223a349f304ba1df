package tui

import (
	"fmt"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// pickKind says what choosing an item of a picker does.
type pickKind int

const (
	pickResume pickKind = iota // continue the session (ref: its directory)
	pickTree                   // fork the session at the entry (ref: its id)
)

// picker is a full-screen list to choose from (/resume, /tree), with a preview of the
// selected item and, for /resume, a filter typed over it.
type picker struct {
	kind    pickKind
	title   string
	items   []pickItem
	sel     int
	filter  string
	session string // /tree: the session the entries belong to
}

// pickItem is one row of a picker.
type pickItem struct {
	label   string
	preview []string
	ref     string
	// filter is the lowercase text the typed filter matches.
	filter string
}

// shown are the items the filter keeps.
func (p *picker) shown() []pickItem {
	if p.filter == "" {
		return p.items
	}
	var out []pickItem
	f := strings.ToLower(p.filter)
	for _, it := range p.items {
		if strings.Contains(it.filter, f) {
			out = append(out, it)
		}
	}
	return out
}

// pickerKey handles a key while a picker is open.
func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	items := p.shown()
	switch s := k.String(); s {
	case "esc", "ctrl+c":
		m.picker = nil
	case "up", "ctrl+p":
		p.sel = max(0, p.sel-1)
	case "down", "ctrl+n":
		p.sel = min(len(items)-1, p.sel+1)
	case "pgup":
		p.sel = max(0, p.sel-m.pickerRows())
	case "pgdown":
		p.sel = min(len(items)-1, p.sel+m.pickerRows())
	case "home":
		p.sel = 0
	case "end":
		p.sel = len(items) - 1
	case "backspace":
		if p.kind == pickResume && p.filter != "" {
			r := []rune(p.filter)
			p.filter, p.sel = string(r[:len(r)-1]), 0
		}
	case "enter":
		if p.sel < 0 || p.sel >= len(items) {
			return nil
		}
		it := items[p.sel]
		m.picker = nil
		if p.kind == pickTree {
			return m.reopen(Request{Mode: OpenFork, Ref: p.session + "@" + it.ref}, nil, "continued from entry "+short(it.ref))
		}
		return m.openSession(it.ref)
	default:
		if t := k.Text; p.kind == pickResume && t != "" && !strings.ContainsFunc(t, unicode.IsControl) {
			p.filter, p.sel = p.filter+t, 0
		}
	}
	return nil
}

// pickerRows is how many items the list shows.
func (m *Model) pickerRows() int {
	return max(3, (m.height-3)*3/5)
}

// pickerFrame is the screen while a picker is open: its title, the list around the
// selection, the preview of the selected item, the keys and the status line.
func (m *Model) pickerFrame() string {
	p, st := m.picker, m.st
	items := p.shown()
	if p.sel >= len(items) {
		p.sel = max(0, len(items)-1)
	}
	rows := []string{st.accent.Render(ansi.Truncate(p.title, m.width, "…"))}
	if p.kind == pickResume {
		rows = append(rows, st.dim.Render("filter: ")+clean(p.filter))
	}
	n := m.pickerRows()
	first := min(max(0, p.sel-n/2), max(0, len(items)-n))
	for i := first; i < min(len(items), first+n); i++ {
		line := "  " + items[i].label
		if i == p.sel {
			line = st.key.Render("› " + items[i].label)
		}
		rows = append(rows, ansi.Truncate(line, m.width, "…"))
	}
	if len(items) == 0 {
		rows = append(rows, st.dim.Render("  nothing matches"))
	}
	rows = append(rows, st.dim.Render(strings.Repeat("─", m.width)))
	room := m.height - len(rows) - 2
	if p.sel < len(items) {
		for _, l := range items[p.sel].preview {
			for _, w := range wrapText(l, m.width) {
				if room <= 0 {
					break
				}
				rows = append(rows, w)
				room--
			}
		}
	}
	for ; room > 0; room-- {
		rows = append(rows, "")
	}
	rows = append(rows, st.dim.Render(fmt.Sprintf("%d of %d · ↑/↓ choose · Enter open · Esc close", min(p.sel+1, len(items)), len(items))))
	rows = append(rows, m.statusLine())
	return strings.Join(rows, "\n")
}
