// Package termtext makes text from models, tools and providers safe to show on a terminal:
// every control sequence is made visible instead of interpreted, so no text rein shows can
// move the cursor, recolour or clear the screen, set the window title, write the clipboard
// (OSC 52), hide itself, or reorder what the reader sees.
//
// Kept as they are: newline, tab and printable text, valid UTF-8 included. Made visible:
// the other C0 controls and DEL (ESC as `\x1b`, carriage return as `\r`, …), C1 controls
// (U+0080–U+009F, among them the one-byte CSI), Unicode bidirectional overrides and isolates
// (U+202A–U+202E, U+2066–U+2069), and bytes that are not valid UTF-8 (`\xNN`).
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible returns s with every control sequence made visible (see the package doc). Text
// without any is returned as it is, without copying.
func Visible(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Unsafe(r):
			writeEscaped(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != '\n' && c != '\t' && (c < 0x20 || c == 0x7f) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || Unsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

// Unsafe reports whether a terminal would interpret r rather than show it (see the package
// doc): the controls but newline and tab, and the bidirectional overrides and isolates. Text
// that keeps its own runes (an editor's) drops them instead of escaping them.
func Unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func writeEscaped(b *strings.Builder, r rune) {
	switch r {
	case '\r':
		b.WriteString(`\r`)
	case '\b':
		b.WriteString(`\b`)
	case '\a':
		b.WriteString(`\a`)
	case '\f':
		b.WriteString(`\f`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if r < 0x100 {
			fmt.Fprintf(b, `\x%02x`, r)
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}
