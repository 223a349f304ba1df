package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The split rules, each the leftmost-first reading of its encoding's pattern, alternative by
// alternative (P is [^\r\n\p{L}\p{N}], C the contractions (?i:'s|'t|'re|'ve|'m|'ll|'d), U
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W [\p{Ll}\p{Lm}\p{Lo}\p{M}], S [^\s\p{L}\p{N}]):
//
//	o200k_base:  P?U*W+C? | P?U+W*C? | \p{N}{1,3} | ' '?S+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//	cl100k_base: C | P?\p{L}+ | \p{N}{1,3} | ' '?S+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//
// Each function returns the end of the piece that starts at p < len(s); s is valid UTF-8.
// Every rune begins some alternative's match, so the pieces cover the text.

func splitO200k(s string, p int) int {
	q := prefixed(s, p)
	for _, match := range [2]func(string, int) int{lettersO200k, capitalsO200k} {
		if q > p {
			if e := match(s, q); e > q {
				return contraction(s, e)
			}
		}
		if e := match(s, p); e > p {
			return contraction(s, e)
		}
	}
	return splitRest(s, p, true)
}

func splitCl100k(s string, p int) int {
	if e := contraction(s, p); e > p {
		return e
	}
	if q := prefixed(s, p); q > p {
		if e := run(s, q, unicode.IsLetter); e > q {
			return e
		}
	}
	if e := run(s, p, unicode.IsLetter); e > p {
		return e
	}
	return splitRest(s, p, false)
}

// prefixed is where the letters start when P? takes the rune at p (the quantifier tries
// that first, then p itself), or p when that rune is not in P.
func prefixed(s string, p int) int {
	r, w := utf8.DecodeRuneInString(s[p:])
	if r == '\r' || r == '\n' || unicode.IsLetter(r) || unicode.IsNumber(r) {
		return p
	}
	return p + w
}

// lettersO200k matches U*W+ at q: the U run as far as it goes, given back rune by rune until W+
// can match. It returns q when nothing matches.
func lettersO200k(s string, q int) int {
	i, lastW := q, -1
	var r rune
	var w int
	for i < len(s) {
		r, w = utf8.DecodeRuneInString(s[i:])
		if !inU(r) {
			break
		}
		if inW(r) {
			lastW = i + w
		}
		i += w
	}
	if i < len(s) && inW(r) && !inU(r) {
		return run(s, i, inW)
	}
	// W+ starts at the last rune of the U run that is in W too; the rune after it is not in W.
	if lastW >= 0 {
		return lastW
	}
	return q
}

// capitalsO200k matches U+W* at q, or returns q.
func capitalsO200k(s string, q int) int {
	i := run(s, q, inU)
	if i == q {
		return q
	}
	return run(s, i, inW)
}

// splitRest is the alternatives both encodings share after their letters: digits,
// punctuation (slashes too in o200k_base) and whitespace.
func splitRest(s string, p int, slash bool) int {
	r, w := utf8.DecodeRuneInString(s[p:])
	if unicode.IsNumber(r) {
		i := p + w
		for n := 1; n < 3 && i < len(s); n++ {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsNumber(r) {
				break
			}
			i += w
		}
		return i
	}
	q := p
	if r == ' ' && p+1 < len(s) {
		if r2, _ := utf8.DecodeRuneInString(s[p+1:]); inS(r2) {
			q = p + 1
		}
	}
	if e := run(s, q, inS); e > q {
		for e < len(s) && (s[e] == '\r' || s[e] == '\n' || slash && s[e] == '/') {
			e++
		}
		return e
	}
	// \s*[\r\n]+: the whitespace run up to its last line break; \s+(?!\S): the run, less
	// its last rune unless the text ends there; \s+.
	end, lastBreak, last := p, -1, p
	for end < len(s) {
		r, w := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsSpace(r) {
			break
		}
		if r == '\r' || r == '\n' {
			lastBreak = end + w
		}
		last = end
		end += w
	}
	switch {
	case lastBreak >= 0:
		return lastBreak
	case end == len(s) || last == p:
		if end > p {
			return end
		}
		return p + w // not reached: every rune is a letter, a number, in S or a space
	default:
		return last
	}
}

// contraction is the end of C at e, or e.
func contraction(s string, e int) int {
	if e+1 >= len(s) || s[e] != '\'' {
		return e
	}
	switch s[e+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return e + 2
	case 'r', 'v':
		if e+2 < len(s) && s[e+2]|0x20 == 'e' {
			return e + 3
		}
	case 'l':
		if e+2 < len(s) && s[e+2]|0x20 == 'l' {
			return e + 3
		}
	}
	return e
}

// run is the end of the run of runes in class that starts at i.
func run(s string, i int, class func(rune) bool) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !class(rune(c)) {
				return i
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if !class(r) {
			return i
		}
		i += w
	}
	return i
}

// inU is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func inU(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) && !unicode.IsLower(r) || unicode.IsMark(r)
}

// inW is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func inW(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsTitle(r) || unicode.IsMark(r)
}

// inS is [^\s\p{L}\p{N}].
func inS(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}
