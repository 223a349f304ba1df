package secret

import (
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Encodings the scanner sees through.
//
// A secret reaches rein's output encoded as often as not: inside a JSON string (a tool call's
// arguments, "line\nAKIA…", where the raw bytes "\nAKIA" put no word boundary before the key,
// or "\u0041KIA…"), percent-encoded in a URL ("%2B" for "+"), or as an HTML character
// reference ("&#43;", "&amp;"). [Scan] decodes the text into views — the text with those
// escapes decoded, then that text decoded again (a JSON string that holds JSON), up to
// maxDecodeDepth times — scans every view with the same rules and maps what it finds back to
// the bytes of the text. A finding then covers every encoded byte of the secret and never
// starts or ends inside an escape, so replacing it with a marker keeps a JSON string valid.

// maxDecodeDepth is how many times a text is decoded: a JSON export holds a tool call's
// arguments as a JSON string, which holds a JSON string, which may hold a shell command's own
// JSON.
const maxDecodeDepth = 4

// unit is one escape a decoding replaced: the bytes [src, srcEnd) of the source text became
// the bytes [dec, decEnd) of the decoded text. int32 is enough: texts are at most
// MaxScanBytes.
type unit struct{ src, srcEnd, dec, decEnd int32 }

// view is a text decoded from another; units (ordered) map its offsets back.
type view struct {
	text  string
	units []unit
}

// views returns text (views[0], no units) and its decoded forms, each decoded from the one
// before, as long as decoding changes something.
func views(text string) []view {
	vs := []view{{text: text}}
	for len(vs) <= maxDecodeDepth {
		dec, units := decodeOnce(vs[len(vs)-1].text)
		if units == nil {
			break
		}
		vs = append(vs, view{text: dec, units: units})
	}
	return vs
}

// decodeOnce decodes every escape of s once; units is nil when s has none.
func decodeOnce(s string) (string, []unit) {
	var b []byte
	var units []unit
	last := 0
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], `\%&`)
		if j < 0 {
			break
		}
		i += j
		var scratch [utf8.UTFMax]byte
		dec, n := appendEscape(scratch[:0], s, i)
		if n == 0 {
			i++
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[last:i]...)
		d := len(b)
		b = append(b, dec...)
		units = append(units, unit{int32(i), int32(i + n), int32(d), int32(len(b))})
		i += n
		last = i
	}
	if units == nil {
		return s, nil
	}
	return string(append(b, s[last:]...)), units
}

// appendEscape decodes the escape at s[i] (a '\\', '%' or '&') onto dst and returns how many
// bytes of s it took; 0 when s[i] starts none.
func appendEscape(dst []byte, s string, i int) ([]byte, int) {
	switch s[i] {
	case '\\':
		return appendJSONEscape(dst, s, i)
	case '%':
		if i+2 < len(s) {
			if h, ok := hexDigits(s[i+1 : i+3]); ok {
				return append(dst, byte(h)), 3
			}
		}
	case '&':
		return appendCharRef(dst, s, i)
	}
	return dst, 0
}

// appendJSONEscape decodes a JSON string escape: \" \\ \/ \b \f \n \r \t and \uXXXX, a
// surrogate pair as one character (a lone surrogate becomes U+FFFD, as encoding/json does).
func appendJSONEscape(dst []byte, s string, i int) ([]byte, int) {
	if i+1 >= len(s) {
		return dst, 0
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/':
		return append(dst, c), 2
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		if i+6 > len(s) {
			return dst, 0
		}
		h, ok := hexDigits(s[i+2 : i+6])
		if !ok {
			return dst, 0
		}
		r := rune(h)
		if !utf16.IsSurrogate(r) {
			return utf8.AppendRune(dst, r), 6
		}
		if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if lo, ok := hexDigits(s[i+8 : i+12]); ok {
				if pair := utf16.DecodeRune(r, rune(lo)); pair != utf8.RuneError {
					return utf8.AppendRune(dst, pair), 12
				}
			}
		}
		return utf8.AppendRune(dst, utf8.RuneError), 6
	}
	return dst, 0
}

// charRefs are the named HTML character references decoded: the ones an encoder writes.
var charRefs = []struct{ name, text string }{{"amp;", "&"}, {"lt;", "<"}, {"gt;", ">"}, {"quot;", `"`}, {"apos;", "'"}}

// appendCharRef decodes an HTML character reference: &#NN; &#xHH; and the names in charRefs.
func appendCharRef(dst []byte, s string, i int) ([]byte, int) {
	rest := s[i+1:]
	if !strings.HasPrefix(rest, "#") {
		for _, r := range charRefs {
			if strings.HasPrefix(rest, r.name) {
				return append(dst, r.text...), 1 + len(r.name)
			}
		}
		return dst, 0
	}
	digits, base := rest[1:], 10
	if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
		digits, base = digits[1:], 16
	}
	end := strings.IndexByte(digits[:min(len(digits), 8)], ';')
	if end <= 0 {
		return dst, 0
	}
	v := 0
	for _, c := range []byte(digits[:end]) {
		d, ok := digitValue(c, base)
		if !ok {
			return dst, 0
		}
		v = v*base + d
	}
	if v == 0 || !utf8.ValidRune(rune(v)) {
		return dst, 0
	}
	return utf8.AppendRune(dst, rune(v)), len(s[i:]) - len(digits) + end + 1
}

func hexDigits(s string) (int, bool) {
	v := 0
	for _, c := range []byte(s) {
		d, ok := digitValue(c, 16)
		if !ok {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

func digitValue(c byte, base int) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case base == 16 && c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case base == 16 && c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// srcStart maps the offset where a finding starts in v.text to the source text: inside a
// decoded escape, the escape's first byte.
func (v *view) srcStart(d int) int {
	i := search(v.units, func(u unit) bool { return int(u.dec) > d }) - 1
	if i < 0 {
		return d
	}
	u := v.units[i]
	if d < int(u.decEnd) {
		return int(u.src)
	}
	return int(u.srcEnd) + d - int(u.decEnd)
}

// srcEnd maps the offset where a finding ends (exclusive) in v.text to the source text: when
// its last byte came from an escape, the end of the escape.
func (v *view) srcEnd(d int) int {
	i := search(v.units, func(u unit) bool { return int(u.dec) >= d }) - 1
	if i < 0 {
		return d
	}
	u := v.units[i]
	if d <= int(u.decEnd) {
		return int(u.srcEnd)
	}
	return int(u.srcEnd) + d - int(u.decEnd)
}

// search returns the first index of units for which after holds (they are ordered, so after is
// false, then true).
func search(units []unit, after func(unit) bool) int {
	lo, hi := 0, len(units)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if after(units[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// escapeSpans lists, in offsets of views[0].text, the bytes each escape of every view came
// from, merged where one holds another (an escape decoded from escapes): disjoint, ordered.
func escapeSpans(vs []view) [][2]int {
	var spans [][2]int
	for k := 1; k < len(vs); k++ {
		for _, u := range vs[k].units {
			s, e := int(u.src), int(u.srcEnd)
			for j := k - 1; j >= 1; j-- {
				s, e = vs[j].srcStart(s), vs[j].srcEnd(e)
			}
			spans = append(spans, [2]int{s, e})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return b[1] - a[1]
	})
	merged := spans[:0]
	for _, sp := range spans {
		if n := len(merged); n > 0 && sp[0] < merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// widen moves the ends of each finding out of any escape they fall inside, so a finding
// covers whole escapes (a base64 run can start at the "n" of "\n").
func widen(fs []Finding, spans [][2]int) {
	inside := func(p int) ([2]int, bool) {
		lo, hi := 0, len(spans)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if spans[m][0] >= p {
				hi = m
			} else {
				lo = m + 1
			}
		}
		if lo == 0 || p >= spans[lo-1][1] {
			return [2]int{}, false
		}
		return spans[lo-1], true
	}
	for i := range fs {
		if sp, ok := inside(fs[i].Start); ok {
			fs[i].Start = sp[0]
		}
		if sp, ok := inside(fs[i].End); ok {
			fs[i].End = sp[1]
		}
	}
}
