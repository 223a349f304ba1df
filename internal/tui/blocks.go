package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/termmd"
	"github.com/reinhq/rein/internal/wire"
)

// A block is one item of the conversation: a prompt, a piece of the answer, a tool call, a
// notice. It lays itself out for a width and then answers for its rows one at a time, so
// that a frame reads only the rows it shows.
type block interface {
	// layout prepares the rows for the view's settings; cheap when nothing changed.
	layout(v *viewSettings)
	len() int
	row(i int) string
}

// viewSettings are what a block's rows depend on besides its content.
type viewSettings struct {
	width int
	st    *styles
	// thinking shows thinking unfolded; expand shows long tool output whole.
	thinking, expand bool
	md               *markdown
}

// cached is a block whose rows are computed whole when its content or the settings change.
type cached struct {
	rows []string
	key  viewSettings
	make func(v *viewSettings) []string
	// dirty forces a new layout (the content changed).
	dirty bool
}

func (c *cached) layout(v *viewSettings) {
	if c.rows != nil && !c.dirty && c.key == *v {
		return
	}
	c.rows, c.key, c.dirty = c.make(v), *v, false
}
func (c *cached) len() int         { return len(c.rows) }
func (c *cached) row(i int) string { return c.rows[i] }

// prefixed wraps text at the width less the prefix's and styles each row.
func prefixed(text, first, rest string, width int, style func(...string) string) []string {
	rows := wrapText(text, max(width-cellWidth(first), 10))
	for i, r := range rows {
		p := rest
		if i == 0 {
			p = first
		}
		rows[i] = p + style(r)
	}
	return rows
}

func newUser(text string) block {
	text = clean(text)
	return &cached{make: func(v *viewSettings) []string {
		return prefixed(text, v.st.user.Render("› "), "  ", v.width, v.st.user.Render)
	}}
}

func newNotice(text string, kind string) block {
	text = clean(text)
	return &cached{make: func(v *viewSettings) []string {
		style := v.st.dim.Render
		mark := "· "
		switch kind {
		case "error":
			style, mark = v.st.bad.Render, "! "
		case "warn":
			style, mark = v.st.warn.Render, "! "
		}
		return prefixed(text, style(mark), "  ", v.width, style)
	}}
}

// textBlock is assistant text: streamed as plain wrapped rows, rendered as markdown once
// the message is complete.
type textBlock struct {
	s     *stream
	final bool
	md    cached
}

func newText(width int) *textBlock {
	t := &textBlock{s: newStream(width - 2)}
	t.md.make = func(v *viewSettings) []string {
		return v.md.render(t.s.text(), v)
	}
	return t
}

func (t *textBlock) layout(v *viewSettings) {
	if t.final {
		t.md.layout(v)
		return
	}
	t.s.resize(v.width - 2)
}

func (t *textBlock) len() int {
	if t.final {
		return t.md.len()
	}
	return t.s.len()
}

func (t *textBlock) row(i int) string {
	if t.final {
		return t.md.row(i)
	}
	return "  " + t.s.row(i)
}

// thinkingBlock is the model's reasoning, folded to one row unless shown.
type thinkingBlock struct {
	s    *stream
	v    viewSettings
	done bool
}

func newThinking(width int) *thinkingBlock { return &thinkingBlock{s: newStream(width - 2)} }

func (t *thinkingBlock) layout(v *viewSettings) {
	t.v = *v
	t.s.resize(v.width - 2)
}

func (t *thinkingBlock) len() int {
	if !t.v.thinking {
		return 1
	}
	return 1 + t.s.len()
}

func (t *thinkingBlock) row(i int) string {
	st := t.v.st
	if i == 0 {
		state := "thinking…"
		if t.done {
			state = "thought"
		}
		hint := "ctrl+t to show"
		if t.v.thinking {
			hint = "ctrl+t to fold"
		}
		lines := "1 line"
		if n := t.s.len(); n != 1 {
			lines = fmt.Sprintf("%d lines", n)
		}
		return st.dim.Render(fmt.Sprintf("∴ %s (%s, %s)", state, lines, hint))
	}
	return st.dim.Render("│ " + t.s.row(i-1))
}

// markdown renders finished answers (package termmd), keeping the theme of the styles it
// was last asked for.
type markdown struct {
	st *styles
	th termmd.Theme
}

func (m *markdown) render(text string, v *viewSettings) []string {
	if m.st != v.st {
		m.st, m.th = v.st, v.st.markdownTheme()
	}
	rows := termmd.Render(clean(text), max(v.width-4, 10), m.th)
	if len(rows) == 0 {
		return []string{""} // an empty answer still takes its row
	}
	for i, r := range rows {
		if r != "" {
			rows[i] = "  " + r
		}
	}
	return rows
}

// argsSummary is a tool call's arguments in one line: the command, path or pattern the
// call is about, else its compact JSON.
func argsSummary(name, args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) == nil {
		for _, k := range []string{"command", "path", "pattern"} {
			if s, ok := m[k].(string); ok && s != "" {
				if name == "grep" || name == "find" {
					if p, ok := m["path"].(string); ok && k == "pattern" && p != "" {
						return s + "  in " + p
					}
				}
				return s
			}
		}
	}
	return strings.TrimSpace(args)
}

// stringArg is one string argument of a call ("" when missing).
func stringArg(args, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}

// callDiff is the change a write or edit call asks for, as diff rows: an edit's replacements
// (-old, +new), a write's content (+). nil for other tools.
func callDiff(name, args string) []string {
	switch name {
	case "write":
		var rows []string
		for _, l := range strings.Split(strings.TrimSuffix(stringArg(args, "content"), "\n"), "\n") {
			rows = append(rows, "+"+l)
		}
		return rows
	case "edit":
		var a struct {
			Edits []struct {
				OldText string `json:"oldText"`
				NewText string `json:"newText"`
			} `json:"edits"`
			OldText string `json:"oldText"`
			NewText string `json:"newText"`
		}
		if json.Unmarshal([]byte(args), &a) != nil {
			return nil
		}
		if a.OldText != "" || a.NewText != "" {
			a.Edits = append(a.Edits, struct {
				OldText string `json:"oldText"`
				NewText string `json:"newText"`
			}{a.OldText, a.NewText})
		}
		var rows []string
		for i, e := range a.Edits {
			rows = append(rows, fmt.Sprintf("@@ edit %d of %d @@", i+1, len(a.Edits)))
			for _, l := range strings.Split(strings.TrimSuffix(e.OldText, "\n"), "\n") {
				rows = append(rows, "-"+l)
			}
			for _, l := range strings.Split(strings.TrimSuffix(e.NewText, "\n"), "\n") {
				rows = append(rows, "+"+l)
			}
		}
		return rows
	}
	return nil
}

// diffRows colours unified diff rows (the header lines --- and +++ are left out).
func diffRows(rows []string, st *styles) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		r = clean(r)
		switch {
		case strings.HasPrefix(r, "+++"), strings.HasPrefix(r, "---"):
			continue
		case strings.HasPrefix(r, "+"):
			r = st.add.Render(r)
		case strings.HasPrefix(r, "-"):
			r = st.del.Render(r)
		case strings.HasPrefix(r, "@@"):
			r = st.hunk.Render(r)
		}
		out = append(out, r)
	}
	return out
}

// resultDiff is the diff an edit result's details carry (nil if none).
func resultDiff(m *wire.Message) []string {
	if m == nil || m.ToolName != "edit" || len(m.Details) == 0 {
		return nil
	}
	var d struct {
		Diff string `json:"diff"`
	}
	if json.Unmarshal(m.Details, &d) != nil || d.Diff == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(d.Diff, "\n"), "\n")
}

// messageText is the text of a message's text parts.
func messageText(m *wire.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
