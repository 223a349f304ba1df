package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The editor's layout: each line is cut into rows of at most limit cells after the prompt;
// one more cell is kept for the cursor after a full row (or a space hanging off its end).

// reverse draws s as the cursor.
func reverse(s string) string { return "\x1b[7m" + s + "\x1b[27m" }

// runeWidth is the cells r takes (0 for a combining mark, 2 for a wide character).
func runeWidth(r rune) int {
	if r >= 0x20 && r < 0x7f {
		return 1
	}
	return ansi.StringWidth(string(r))
}

func runesWidth(rs []rune) int {
	n := 0
	for _, r := range rs {
		n += runeWidth(r)
	}
	return n
}

// limit is the cells of text a row holds.
func (e *editor) limit() int {
	return max(e.width-len(inputPrompt)-1, 1)
}

// wrapLine is where line's rows start: a row ends after its last space when the next rune
// does not fit, else before that rune; a space that just overflows a row hangs off its end.
// A line ending in such a space gets an empty row for the cursor.
func wrapLine(line []rune, limit int) []int {
	starts := []int{0}
	start, w, space := 0, 0, -1 // the row's start and width; the offset after its last space
	for i, r := range line {
		rw := runeWidth(r)
		if w+rw > limit && i > start && (r != ' ' || w+rw > limit+1) {
			cut := i
			if space > start {
				cut = space
			}
			starts = append(starts, cut)
			start, w, space = cut, runesWidth(line[cut:i]), -1
			if w+rw > limit && i > start { // what followed the space no longer fits
				starts = append(starts, i)
				start, w = i, 0
			}
		}
		w += rw
		if r == ' ' {
			space = i + 1
		}
	}
	if w > limit {
		starts = append(starts, len(line))
	}
	return starts
}

// fit lays the text out again at the width and scrolls the cursor into view. Every change
// ends with it.
func (e *editor) fit() {
	e.rev++
	limit := e.limit()
	e.wraps = e.wraps[:0]
	total := 0
	for _, l := range e.lines {
		w := wrapLine(l, limit)
		e.wraps = append(e.wraps, w)
		total += len(w)
	}
	e.height = min(max(total, 1), inputMaxHeight)
	cur := e.cursorRow()
	if cur < e.top {
		e.top = cur
	}
	if cur >= e.top+e.height {
		e.top = cur - e.height + 1
	}
	e.top = max(0, min(e.top, total-e.height))
}

// segment is the cursor's row within its line.
func (e *editor) segment() int {
	starts := e.wraps[e.row]
	k := 0
	for k+1 < len(starts) && starts[k+1] <= e.col {
		k++
	}
	return k
}

// cursorRow is the cursor's row among all rows.
func (e *editor) cursorRow() int {
	n := 0
	for _, w := range e.wraps[:e.row] {
		n += len(w)
	}
	return n + e.segment()
}

// onFirstRow and onLastRow say the cursor is on the editor's first or last row.
func (e *editor) onFirstRow() bool { return e.row == 0 && e.segment() == 0 }
func (e *editor) onLastRow() bool {
	return e.row == len(e.lines)-1 && e.segment() == len(e.wraps[e.row])-1
}

// bounds are the offsets row k of line r spans, and the last offset the cursor can take on
// it (a row's end is the next row's start, where the cursor is drawn).
func (e *editor) bounds(r, k int) (start, end, last int) {
	starts := e.wraps[r]
	start, end, last = starts[k], len(e.lines[r]), len(e.lines[r])
	if k+1 < len(starts) {
		end = starts[k+1]
		last = end - 1
	}
	return start, end, last
}

// vertical moves the cursor one row up (dir -1) or down, to the display column it kept
// since the first of such moves; at the first or last row it stays.
func (e *editor) vertical(dir int) {
	k := e.segment()
	start, _, _ := e.bounds(e.row, k)
	if e.goal < 0 {
		e.goal = runesWidth(e.lines[e.row][start:e.col])
	}
	row, k := e.row, k+dir
	switch {
	case k < 0 && row == 0, k >= len(e.wraps[row]) && row == len(e.lines)-1:
		return
	case k < 0:
		row--
		k = len(e.wraps[row]) - 1
	case k >= len(e.wraps[row]):
		row, k = row+1, 0
	}
	start, _, last := e.bounds(row, k)
	line, c, w := e.lines[row], start, 0
	for c < last && w+runeWidth(line[c]) <= e.goal {
		w += runeWidth(line[c])
		c++
	}
	e.row, e.col = row, c
}

// View draws the rows in view, the prompt before each.
func (e *editor) View() string {
	if len(e.lines) == 1 && len(e.lines[0]) == 0 {
		p := []rune(ansi.Truncate(inputPlaceholder, e.limit(), ""))
		return inputPrompt + reverse(string(p[:1])) + e.dim(string(p[1:]))
	}
	var b strings.Builder
	n := 0
	for r, starts := range e.wraps {
		for k := range starts {
			if n >= e.top && n < e.top+e.height {
				if n > e.top {
					b.WriteByte('\n')
				}
				b.WriteString(inputPrompt)
				e.writeRow(&b, r, k)
			}
			n++
		}
	}
	return b.String()
}

// writeRow writes row k of line r, with the cursor when it is there.
func (e *editor) writeRow(b *strings.Builder, r, k int) {
	line := e.lines[r]
	start, end, _ := e.bounds(r, k)
	if r != e.row || k != e.segment() {
		b.WriteString(string(line[start:end]))
		return
	}
	b.WriteString(string(line[start:e.col]))
	if e.col == end {
		b.WriteString(reverse(" "))
		return
	}
	under := e.col + 1
	for under < end && runeWidth(line[under]) == 0 { // combining marks go with their base
		under++
	}
	b.WriteString(reverse(string(line[e.col:under])))
	b.WriteString(string(line[under:end]))
}
