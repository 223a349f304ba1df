package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/internal/wire"
)

// Folding: a finished tool's output shows this many rows unless expanded; a running one its
// last liveRows rows.
const (
	foldRows = 10
	liveRows = 5
)

// toolBlock is one tool call: its arguments as it starts, its live output while it runs,
// then its result (an edit or write as a coloured diff), folded when long.
type toolBlock struct {
	id, name, args string
	out            *stream
	result         *wire.Message
	// denied is set when the call never ran (refused by a rule or the user).
	cached
}

func newTool(c *wire.Call, width int) *toolBlock {
	t := &toolBlock{id: c.ID, name: c.Name, args: c.Arguments, out: newStream(width - 4)}
	t.make = t.rows
	return t
}

func (t *toolBlock) output(d *wire.Delta) {
	if d.Reset {
		t.out = newStream(t.out.width)
	}
	t.out.add(clean(d.Text))
	t.dirty = true
}

func (t *toolBlock) end(m *wire.Message) {
	t.result = m
	t.dirty = true
}

func (t *toolBlock) rows(v *viewSettings) []string {
	st := v.st
	t.out.resize(v.width - 4)
	mark, markStyle := "⏺", st.tool
	switch {
	case t.result == nil:
		mark = "◌"
	case t.result.IsError:
		mark, markStyle = "✗", st.bad
	}
	head := markStyle.Render(mark+" "+t.name) + " " + ansi.Truncate(clean(oneLine(argsSummary(t.name, t.args))), max(v.width-len(t.name)-4, 10), "…")
	rows := []string{head}
	body, label := t.body(v)
	if len(body) == 0 {
		return rows
	}
	limit := len(body)
	if !v.expand && len(body) > foldRows+2 {
		limit = foldRows
	}
	for _, r := range body[:limit] {
		rows = append(rows, "  "+st.dim.Render("│ ")+r)
	}
	if limit < len(body) {
		rows = append(rows, "  "+st.dim.Render(fmt.Sprintf("… %d more %s (ctrl+o to expand)", len(body)-limit, label)))
	}
	return rows
}

// body is what shows under the call's header, and what its rows are called.
func (t *toolBlock) body(v *viewSettings) ([]string, string) {
	if t.result == nil {
		n := t.out.len()
		if n == 1 && t.out.row(0) == "" {
			return nil, "lines"
		}
		from := max(0, n-liveRows)
		rows := make([]string, 0, n-from)
		for i := from; i < n; i++ {
			rows = append(rows, v.st.dim.Render(t.out.row(i)))
		}
		return rows, "lines"
	}
	if !t.result.IsError {
		if d := resultDiff(t.result); d != nil {
			return diffRows(d, v.st), "diff lines"
		}
		if t.name == "write" {
			if d := callDiff("write", t.args); d != nil {
				return diffRows(d, v.st), "lines written"
			}
		}
	}
	text := strings.TrimRight(clean(messageText(t.result)), "\n")
	if text == "" {
		return nil, "lines"
	}
	style := plain
	if t.result.IsError {
		style = v.st.bad.Render
	}
	rows := wrapText(text, max(v.width-4, 10))
	for i := range rows {
		rows[i] = style(rows[i])
	}
	return rows, "lines"
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// cellWidth is the width of s on the terminal.
func cellWidth(s string) int { return ansi.StringWidth(s) }
