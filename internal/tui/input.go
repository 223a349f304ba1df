package tui

import (
	"slices"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/termtext"
)

// The editor's look: the prompt on every row, the placeholder of an empty editor, and the
// most rows it grows to (it starts at one and follows its text).
const (
	inputPrompt      = "> "
	inputPlaceholder = "Type a message; / for commands"
	inputMaxHeight   = 6
	inputTab         = "    "
)

// editor is the UI's input editor: lines of text soft-wrapped at the width (after the last
// space of a row when there is one), from 1 to inputMaxHeight rows high, scrolled to keep
// the cursor in view. The cursor is a rune offset in a line; it is drawn in reverse video
// and does not blink, so an idle screen is never redrawn. Text enters only through insert,
// which drops control characters: what View writes is the text as typed.
type editor struct {
	lines    [][]rune // never empty
	row, col int      // the cursor: a line and a rune offset in it
	goal     int      // the display column Up and Down keep to; -1: the cursor's own
	width    int      // the whole width, the prompt included
	wraps    [][]int  // per line, the offsets its wrapped rows start at (kept by fit)
	top      int      // the first wrapped row shown
	height   int
	dim      func(string) string
	// rev counts the layouts (every change and every move ends in fit): View's output is a
	// function of rev, the width and the styles, so a caller keeps a drawn view by it.
	rev uint64
}

// newInput is the UI's editor at width in st's colours.
func newInput(width int, st *styles) editor {
	e := editor{width: width}
	e.SetStyles(st)
	e.Reset()
	return e
}

// SetStyles colours the placeholder as st's dim text.
func (e *editor) SetStyles(st *styles) {
	e.rev++
	e.dim = sgr(st.dim)
	if e.dim == nil {
		e.dim = func(s string) string { return s }
	}
}

// SetWidth sets the whole width the editor is drawn in.
func (e *editor) SetWidth(w int) {
	e.width = w
	e.fit()
}

// Value is the text, lines joined by "\n".
func (e *editor) Value() string {
	var b strings.Builder
	for i, l := range e.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(string(l))
	}
	return b.String()
}

// Reset empties the editor.
func (e *editor) Reset() {
	e.lines = [][]rune{{}}
	e.row, e.col, e.top, e.goal = 0, 0, 0, -1
	e.fit()
}

// SetValue replaces the text; the cursor goes to its end.
func (e *editor) SetValue(s string) {
	e.Reset()
	e.InsertString(s)
}

// InsertString inserts s at the cursor, which ends after it. Line ends ("\r\n", "\r") become
// "\n", a tab four spaces; other control characters are dropped.
func (e *editor) InsertString(s string) {
	e.insert(sanitize(s))
	e.goal = -1
	e.fit()
}

// Line is the cursor's line (0: the first), LineCount the number of lines, Column the
// cursor's rune offset in its line, Height the rows the editor takes.
func (e *editor) Line() int      { return e.row }
func (e *editor) LineCount() int { return len(e.lines) }
func (e *editor) Column() int    { return e.col }
func (e *editor) Height() int    { return e.height }

// sanitize is s as the editor's runes.
func sanitize(s string) []rune {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			out = append(out, '\n')
		case r == '\t':
			out = append(out, []rune(inputTab)...)
		case termtext.Unsafe(r):
		default:
			out = append(out, r)
		}
	}
	return out
}

// insert puts rs (lines split at '\n') at the cursor.
func (e *editor) insert(rs []rune) {
	if len(rs) == 0 {
		return
	}
	line := e.lines[e.row]
	parts := splitLines(rs)
	if len(parts) == 1 {
		e.lines[e.row] = slices.Insert(line, e.col, rs...)
		e.col += len(rs)
		return
	}
	tail := slices.Clone(line[e.col:])
	added := make([][]rune, 0, len(parts))
	added = append(added, append(line[:e.col:e.col], parts[0]...))
	added = append(added, parts[1:len(parts)-1]...)
	last := parts[len(parts)-1]
	added = append(added, append(slices.Clone(last), tail...))
	e.lines = slices.Replace(e.lines, e.row, e.row+1, added...)
	e.row += len(parts) - 1
	e.col = len(last)
}

// splitLines splits rs at '\n' into fresh slices.
func splitLines(rs []rune) [][]rune {
	var out [][]rune
	for {
		i := slices.Index(rs, '\n')
		if i < 0 {
			return append(out, slices.Clone(rs))
		}
		out = append(out, slices.Clone(rs[:i]))
		rs = rs[i+1:]
	}
}

// cut deletes the text from (r0, c0) to (r1, c1) (the first not after the second) and puts
// the cursor where it began.
func (e *editor) cut(r0, c0, r1, c1 int) {
	joined := append(e.lines[r0][:c0:c0], e.lines[r1][c1:]...)
	e.lines = slices.Replace(e.lines, r0, r1+1, joined)
	e.row, e.col = r0, c0
}

// Update handles a key press; other messages change nothing. Enter is the UI's.
func (e *editor) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	s := k.String()
	vertical := s == "up" || s == "down" || s == "ctrl+p" || s == "ctrl+n"
	if !e.edit(s) && !e.move(s) && k.Text != "" {
		e.insert(sanitize(k.Text))
	}
	if !vertical {
		e.goal = -1
	}
	e.fit()
	return nil
}

// edit handles the keys that change the text; false for any other key.
func (e *editor) edit(key string) bool {
	line := e.lines[e.row]
	switch key {
	case "ctrl+j", "shift+enter":
		e.insert([]rune{'\n'})
	case "backspace", "ctrl+h":
		e.backspace()
	case "delete", "ctrl+d":
		if r, c := e.right(); r != e.row || c != e.col {
			e.cut(e.row, e.col, r, c)
		}
	case "ctrl+w", "alt+backspace", "ctrl+backspace":
		r, c := e.wordLeft()
		e.cut(r, c, e.row, e.col)
	case "alt+d", "alt+delete", "ctrl+delete":
		r, c := e.wordRight()
		e.cut(e.row, e.col, r, c)
	case "ctrl+u":
		e.cut(e.row, 0, e.row, e.col)
	case "ctrl+k":
		e.cut(e.row, e.col, e.row, len(line))
	default:
		return false
	}
	return true
}

// cutBefore deletes s when it is what the cursor's line holds just before the cursor, and
// reports whether it did; the cursor keeps no column for Up and Down from before.
func (e *editor) cutBefore(s string) bool {
	rs, line := []rune(s), e.lines[e.row]
	if len(rs) == 0 || e.col < len(rs) || !slices.Equal(line[e.col-len(rs):e.col], rs) {
		return false
	}
	e.cut(e.row, e.col-len(rs), e.row, e.col)
	e.goal = -1
	e.fit()
	return true
}

// backspace deletes the rune before the cursor, joining the line to the one above at its
// start.
func (e *editor) backspace() {
	if r, c := e.left(); r != e.row || c != e.col {
		e.cut(r, c, e.row, e.col)
	}
}

// move handles the keys that move the cursor; false for any other key.
func (e *editor) move(key string) bool {
	switch key {
	case "left", "ctrl+b":
		e.row, e.col = e.left()
	case "right", "ctrl+f":
		e.row, e.col = e.right()
	case "alt+left", "ctrl+left", "alt+b":
		e.row, e.col = e.wordLeft()
	case "alt+right", "ctrl+right", "alt+f":
		e.row, e.col = e.wordRight()
	case "home", "ctrl+a":
		e.col = 0
	case "end", "ctrl+e":
		e.col = len(e.lines[e.row])
	case "ctrl+home", "alt+<":
		e.row, e.col = 0, 0
	case "ctrl+end", "alt+>":
		e.row = len(e.lines) - 1
		e.col = len(e.lines[e.row])
	case "up", "ctrl+p":
		e.vertical(-1)
	case "down", "ctrl+n":
		e.vertical(1)
	default:
		return false
	}
	return true
}

// left and right are the positions one rune before and after the cursor (across line ends).
func (e *editor) left() (int, int) {
	switch {
	case e.col > 0:
		return e.row, e.col - 1
	case e.row > 0:
		return e.row - 1, len(e.lines[e.row-1])
	}
	return e.row, e.col
}

func (e *editor) right() (int, int) {
	switch {
	case e.col < len(e.lines[e.row]):
		return e.row, e.col + 1
	case e.row < len(e.lines)-1:
		return e.row + 1, 0
	}
	return e.row, e.col
}

// wordLeft is the start of the word before the cursor (words are runs of non-space); at a
// line's start, the end of the line above. wordRight is the end of the word after it; at a
// line's end, the start of the next.
func (e *editor) wordLeft() (int, int) {
	line, c := e.lines[e.row], e.col
	if c == 0 {
		return e.left()
	}
	for c > 0 && unicode.IsSpace(line[c-1]) {
		c--
	}
	for c > 0 && !unicode.IsSpace(line[c-1]) {
		c--
	}
	return e.row, c
}

func (e *editor) wordRight() (int, int) {
	line, c := e.lines[e.row], e.col
	if c == len(line) {
		return e.right()
	}
	for c < len(line) && unicode.IsSpace(line[c]) {
		c++
	}
	for c < len(line) && !unicode.IsSpace(line[c]) {
		c++
	}
	return e.row, c
}
