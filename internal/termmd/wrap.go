package termmd

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Theme says how each kind of text looks. A nil function leaves its text as it is; the
// functions must add only escape sequences (no cells). Marks keeps the inline markers
// (**strong**, *emphasis*, `code`, ~~struck~~) as text, for a terminal without colour.
type Theme struct {
	Heading, Strong, Emph, Strike, Code, CodeBlock, Link, URL, Quote, Rule, Marker func(string) string

	Marks bool
}

func (th *Theme) apply(st style, s string) string {
	for _, f := range []struct {
		bit style
		fn  func(string) string
	}{{sCode, th.Code}, {sEmph, th.Emph}, {sStrong, th.Strong}, {sStrike, th.Strike}, {sLink, th.Link}, {sURL, th.URL}, {sHeading, th.Heading}, {sMarker, th.Marker}} {
		if st&f.bit != 0 && f.fn != nil {
			s = f.fn(s)
		}
	}
	return s
}

func styled(fn func(string) string, s string) string {
	if fn == nil || s == "" {
		return s
	}
	return fn(s)
}

// cellWidth is the width of s in terminal cells.
func cellWidth(s string) int { return ansi.StringWidth(s) }

// piece is part of a word in one style.
type piece struct {
	text string
	st   style
}

// wrapper lays words out greedily in rows of at most width cells.
type wrapper struct {
	width int
	th    *Theme
	rows  []string
	row   []piece
	w     int
}

// wrap lays styled segments out in rows of at most width cells, breaking at spaces, at "\n"
// segments (hard breaks) and inside words longer than a row.
func wrap(segs []seg, width int, th *Theme) []string {
	wr := &wrapper{width: max(width, 1), th: th}
	var word []piece
	ww := 0
	end := func() {
		if len(word) > 0 {
			wr.word(word, ww)
			word, ww = nil, 0
		}
	}
	for _, sg := range segs {
		if sg.text == "\n" {
			end()
			wr.flush()
			continue
		}
		for t := sg.text; t != ""; {
			sp := strings.IndexAny(t, " \n")
			if sp < 0 {
				word = append(word, piece{t, sg.st})
				ww += cellWidth(t)
				break
			}
			if sp > 0 {
				word = append(word, piece{t[:sp], sg.st})
				ww += cellWidth(t[:sp])
			}
			end()
			t = t[sp+1:]
		}
	}
	end()
	if len(wr.row) > 0 || len(wr.rows) == 0 {
		wr.flush()
	}
	return wr.rows
}

func (wr *wrapper) word(word []piece, ww int) {
	if len(wr.row) > 0 && wr.w+1+ww > wr.width {
		wr.flush()
	}
	if len(wr.row) > 0 {
		st := wr.row[len(wr.row)-1].st
		if st != word[0].st {
			st = 0
		}
		wr.row = append(wr.row, piece{" ", st})
		wr.w++
	}
	for ww > wr.width-wr.w {
		// the word does not fit an empty row: cut it at the row's end
		head, rest, hw := cutPieces(word, wr.width-wr.w)
		if hw == 0 {
			head, rest, hw = firstRune(word) // wider than the row: the guard cuts it
		}
		wr.row = append(wr.row, head...)
		wr.w += hw
		wr.flush()
		word, ww = rest, ww-hw
		if len(word) == 0 {
			return
		}
	}
	wr.row = append(wr.row, word...)
	wr.w += ww
}

// flush ends the current row, styling runs of one style together.
func (wr *wrapper) flush() {
	var b strings.Builder
	for i := 0; i < len(wr.row); {
		j := i
		var run strings.Builder
		for j < len(wr.row) && wr.row[j].st == wr.row[i].st {
			run.WriteString(wr.row[j].text)
			j++
		}
		b.WriteString(wr.th.apply(wr.row[i].st, run.String()))
		i = j
	}
	wr.rows = append(wr.rows, strings.TrimRight(b.String(), " "))
	wr.row, wr.w = wr.row[:0], 0
}

// cutPieces splits a word into a head of at most n cells and the rest.
func cutPieces(word []piece, n int) (head, rest []piece, w int) {
	for i, p := range word {
		pw := cellWidth(p.text)
		if w+pw <= n {
			head = append(head, p)
			w += pw
			continue
		}
		h, t := cutCells(p.text, n-w)
		if h != "" {
			head = append(head, piece{h, p.st})
			w += cellWidth(h)
		}
		rest = append([]piece{{t, p.st}}, word[i+1:]...)
		return head, rest, w
	}
	return head, nil, w
}

// firstRune splits a word after its first rune.
func firstRune(word []piece) (head, rest []piece, w int) {
	for i, p := range word {
		if p.text == "" {
			continue
		}
		_, size := utf8.DecodeRuneInString(p.text)
		head = []piece{{p.text[:size], p.st}}
		rest = append([]piece{{p.text[size:], p.st}}, word[i+1:]...)
		return head, rest, cellWidth(p.text[:size])
	}
	return nil, nil, 0
}

// cutCells splits plain text s after at most n cells, by runes (a zero-width rune stays
// with the one before it).
func cutCells(s string, n int) (head, rest string) {
	w := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		rw := cellWidth(s[i : i+size])
		if w+rw > n {
			return s[:i], s[i:]
		}
		w += rw
		i += size
	}
	return s, ""
}

// hardWrap cuts a line of plain text (code, a table's source row) into rows of at most width
// cells without reflowing it.
func hardWrap(line string, width int) []string {
	width = max(width, 1)
	if cellWidth(line) <= width {
		return []string{line}
	}
	var rows []string
	for line != "" {
		h, t := cutCells(line, width)
		if h == "" {
			_, size := utf8.DecodeRuneInString(line)
			h, t = line[:size], line[size:] // wider than the row: the guard cuts it
		}
		rows = append(rows, h)
		line = t
	}
	return rows
}

// fit cuts a row that is still wider than width (a character wider than a narrow row).
func fit(row string, width int) string {
	if cellWidth(row) <= width {
		return row
	}
	return ansi.Truncate(row, width, "")
}
