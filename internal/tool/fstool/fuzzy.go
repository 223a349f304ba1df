package fstool

import "unicode/utf8"

// fuzzyText is a text normalized for fuzzy matching, with a map back to the original so that
// a fuzzy match replaces the original bytes and leaves everything else untouched.
//
// The normalization: trailing spaces and tabs at the end of every line are dropped; typographic
// single quotes become ', double quotes become ", hyphen and dash variants become -, and
// non-breaking and other special spaces become a plain space. Every normalized rune is one
// rune of the original.
type fuzzyText struct {
	s string
	// orig[i] is the offset in the original text of the rune that produced byte i of s;
	// orig[len(s)] is the length of the original.
	orig []int
}

func fuzzyRune(r rune) rune {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033':
		return '"'
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u00A0', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
		'\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	return r
}

func fuzzyNormalize(text string) fuzzyText {
	out := make([]byte, 0, len(text))
	orig := make([]int, 0, len(text)+1)
	// pending holds a run of blanks (offset in text, normalized rune) not yet known to be
	// trailing.
	type blank struct {
		off int
		r   byte
	}
	var pending []blank
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 {
			for _, b := range pending {
				out, orig = append(out, b.r), append(orig, b.off)
			}
			pending = pending[:0]
			out, orig = append(out, text[i]), append(orig, i)
			i++
			continue
		}
		m := fuzzyRune(r)
		switch {
		case m == ' ' || m == '\t':
			pending = append(pending, blank{i, byte(m)})
		case m == '\n':
			pending = pending[:0]
			out, orig = append(out, '\n'), append(orig, i)
		default:
			for _, b := range pending {
				out, orig = append(out, b.r), append(orig, b.off)
			}
			pending = pending[:0]
			if m != r {
				out, orig = utf8.AppendRune(out, m), append(orig, i)
			} else {
				out = append(out, text[i:i+n]...)
				for k := range n {
					orig = append(orig, i+k)
				}
			}
		}
		i += n
	}
	orig = append(orig, len(text))
	return fuzzyText{s: string(out), orig: orig}
}

// span maps the normalized range [a, b) to the original range it covers. Blanks dropped at
// the end of a line that the range ends on are included.
func (f fuzzyText) span(a, b int) (int, int) { return f.orig[a], f.orig[b] }
