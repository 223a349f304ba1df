package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// stream is text that grows by deltas, wrapped at a width as it arrives. Greedy wrapping
// only ever changes the last row when text is appended, so the rows before it are final and
// kept; a delta costs time in its own length plus one row, and a whole answer costs time
// linear in its length (see BenchmarkStream).
type stream struct {
	width int
	raw   strings.Builder
	rows  []string
	// tail is the raw text of the last, unfinished row.
	tail string
}

func newStream(width int) *stream { return &stream{width: max(width, 1)} }

// add appends plain text (no escape sequences: callers pass it through termtext first).
func (s *stream) add(text string) {
	s.raw.WriteString(text)
	s.tail += text
	s.settle()
}

// text is everything added so far.
func (s *stream) text() string { return s.raw.String() }

// len is the number of rows, the unfinished one included.
func (s *stream) len() int { return len(s.rows) + 1 }

func (s *stream) row(i int) string {
	if i < len(s.rows) {
		return s.rows[i]
	}
	return s.tail
}

// resize wraps everything again at width.
func (s *stream) resize(width int) {
	width = max(width, 1)
	if width == s.width {
		return
	}
	s.width, s.rows, s.tail = width, nil, s.raw.String()
	s.settle()
}

// settle moves finished rows out of the tail.
func (s *stream) settle() {
	for {
		nl := strings.IndexByte(s.tail, '\n')
		line := s.tail
		if nl >= 0 {
			line = s.tail[:nl]
		}
		cut, next := breakRow(line, s.width)
		if cut < 0 {
			if nl < 0 {
				return
			}
			s.rows = append(s.rows, line)
			s.tail = s.tail[nl+1:]
			continue
		}
		s.rows = append(s.rows, strings.TrimRight(s.tail[:cut], " "))
		s.tail = s.tail[next:]
	}
}

// breakRow finds where a row of at most width cells ends in line: at the last space that
// fits, else (one long word) at the last character that fits. cut < 0 when line fits whole;
// next is where the following row starts. It reads at most one row and a word of line.
func breakRow(line string, width int) (cut, next int) {
	w, space := 0, -1
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		rw := ansi.StringWidth(line[i : i+n])
		if r == ' ' {
			space = i
		}
		if w+rw > width {
			if r == ' ' {
				return i, skipSpaces(line, i)
			}
			if space > 0 {
				return space, skipSpaces(line, space)
			}
			if i == 0 {
				return n, n // a character wider than the row
			}
			return i, i
		}
		w += rw
		i += n
	}
	return -1, 0
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// wrapText wraps finished text at width (the same rows a stream of it would have).
func wrapText(text string, width int) []string {
	s := newStream(width)
	s.add(text)
	out := append([]string(nil), s.rows...)
	return append(out, s.tail)
}
