package termmd

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// style is a set of inline attributes of a piece of text.
type style uint8

const (
	sStrong style = 1 << iota
	sEmph
	sStrike
	sCode
	sLink
	sURL
	sHeading
	sMarker
)

// seg is a run of text with one style; "\n" alone is a hard line break.
type seg struct {
	text string
	st   style
}

// token is one piece of a paragraph before emphasis is matched: text (segs) or a run of
// delimiter characters.
type token struct {
	segs []seg
	// delim is '*', '_' or '~' for a delimiter run of n characters; 0 for text.
	delim             byte
	n                 int
	canOpen, canClose bool
	open, close       bool
	// st is the style a matched pair gives what lies between (on the opener).
	st style
}

// inline parses a paragraph's text (soft line breaks already joined with "\n") into styled
// segments, every one carrying base.
func inline(src string, base style, marks bool) []seg {
	p := &inlineParser{src: src, marks: marks, base: base, rb: -1, rp: -1}
	p.codeRuns()
	p.tokenize()
	p.match()
	return p.flatten()
}

type inlineParser struct {
	src   string
	marks bool
	base  style
	toks  []token
	text  strings.Builder
	// runs are the backtick runs (start, length); closer[i] is the index of the next run
	// of the same length, -1 if none.
	runs   [][2]int
	closer []int
	run    int
	// rb and rp cache the next ']' and ')' at or after a position (queries only move right).
	rb, rp int
}

func (p *inlineParser) codeRuns() {
	for i := 0; i < len(p.src); {
		if p.src[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(p.src) && p.src[j] == '`' {
			j++
		}
		p.runs = append(p.runs, [2]int{i, j - i})
		i = j
	}
	p.closer = make([]int, len(p.runs))
	last := map[int]int{}
	for i := len(p.runs) - 1; i >= 0; i-- {
		n := p.runs[i][1]
		if j, ok := last[n]; ok {
			p.closer[i] = j
		} else {
			p.closer[i] = -1
		}
		last[n] = i
	}
}

// flush ends the current text token.
func (p *inlineParser) flush() {
	if p.text.Len() > 0 {
		p.toks = append(p.toks, token{segs: []seg{{p.text.String(), 0}}})
		p.text.Reset()
	}
}

func (p *inlineParser) emit(segs ...seg) {
	p.flush()
	p.toks = append(p.toks, token{segs: segs})
}

func (p *inlineParser) tokenize() {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			p.text.WriteByte(s[i+1])
			i += 2
		case c == '\n':
			p.emit(seg{"\n", 0})
			i++
		case c == '`':
			i = p.codeSpan(i)
		case c == '*' || c == '_' || c == '~':
			i = p.delimRun(i)
		case c == '[' || (c == '!' && i+1 < len(s) && s[i+1] == '['):
			i = p.link(i)
		case c == '<':
			i = p.autolink(i)
		default:
			p.text.WriteByte(c)
			i++
		}
	}
	p.flush()
}

// codeSpan reads the backtick run at i: a code span up to the next run of the same length,
// else literal backticks.
func (p *inlineParser) codeSpan(i int) int {
	for p.run < len(p.runs) && p.runs[p.run][0] < i {
		p.run++
	}
	if p.run == len(p.runs) || p.runs[p.run][0] != i {
		p.text.WriteByte('`') // the rest of a run whose first backtick was escaped
		return i + 1
	}
	r := p.run
	n := p.runs[r][1]
	p.run++
	j := p.closer[r]
	if j < 0 {
		p.text.WriteString(p.src[i : i+n])
		return i + n
	}
	end := p.runs[j][0]
	code := strings.ReplaceAll(p.src[i+n:end], "\n", " ")
	if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
		code = code[1 : len(code)-1]
	}
	if p.marks {
		code = p.src[i:i+n] + code + p.src[i:i+n]
	}
	p.emit(seg{code, sCode})
	for p.run < len(p.runs) && p.runs[p.run][0] <= end {
		p.run++
	}
	return end + n
}

func (p *inlineParser) delimRun(i int) int {
	s, c := p.src, p.src[i]
	j := i
	for j < len(s) && s[j] == c {
		j++
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	next, _ := utf8.DecodeRuneInString(s[j:])
	if i == 0 {
		prev = ' '
	}
	if j == len(s) {
		next = ' '
	}
	left, right := !unicode.IsSpace(next), !unicode.IsSpace(prev)
	t := token{delim: c, n: j - i, canOpen: left, canClose: right}
	if c == '_' {
		t.canOpen = left && !isAlnum(prev)
		t.canClose = right && !isAlnum(next)
	}
	if t.n > 3 || (c == '~' && t.n > 2) {
		t.canOpen, t.canClose = false, false
	}
	p.flush()
	t.segs = []seg{{s[i:j], 0}}
	p.toks = append(p.toks, t)
	return j
}

// nextByte is the index of the next b at or after i (-1 if none), cached in *cache because
// the parser only asks for positions to the right of earlier ones.
func (p *inlineParser) nextByte(b byte, i int, cache *int) int {
	if *cache >= i {
		return *cache
	}
	if *cache == -2 {
		return -1
	}
	k := strings.IndexByte(p.src[i:], b)
	if k < 0 {
		*cache = -2
		return -1
	}
	*cache = i + k
	return *cache
}

// link reads [text](url) or ![alt](url) at i; anything else is literal.
func (p *inlineParser) link(i int) int {
	open := i
	if p.src[i] == '!' {
		open++
	}
	rb := p.nextByte(']', open, &p.rb)
	if rb < 0 || rb+1 >= len(p.src) || p.src[rb+1] != '(' {
		p.text.WriteString(p.src[i : open+1])
		return open + 1
	}
	rp := p.nextByte(')', rb, &p.rp)
	url := ""
	if rp > rb {
		url = strings.TrimSpace(p.src[rb+2 : rp])
		if k := strings.IndexAny(url, " \n"); k >= 0 {
			url = url[:k] // a title after the URL is dropped
		}
	}
	if rp < 0 || url == "" || strings.ContainsAny(p.src[open+1:rb], "[") {
		p.text.WriteString(p.src[i : open+1])
		return open + 1
	}
	url = strings.TrimSuffix(strings.TrimPrefix(url, "<"), ">")
	label := p.src[open+1 : rb]
	var segs []seg
	if label != "" && label != url {
		for _, sg := range inline(label, 0, p.marks) {
			sg.st |= sLink
			segs = append(segs, sg)
		}
		segs = append(segs, seg{" (" + url + ")", sURL})
	} else {
		segs = append(segs, seg{url, sURL})
	}
	p.emit(segs...)
	return rp + 1
}

// autolink reads <scheme://…> at i; anything else is literal.
func (p *inlineParser) autolink(i int) int {
	end := strings.IndexAny(p.src[i+1:], "> \n<")
	if end > 0 && p.src[i+1+end] == '>' {
		u := p.src[i+1 : i+1+end]
		if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "mailto:") {
			p.emit(seg{u, sURL})
			return i + 2 + end
		}
	}
	p.text.WriteByte('<')
	return i + 1
}

// maxOpeners bounds how far down the stack of openers a closer looks, so a paragraph of
// unmatched delimiters costs linear time.
const maxOpeners = 32

// match pairs delimiter runs: a closer takes the nearest opener of the same character and
// length; openers above it stay literal.
func (p *inlineParser) match() {
	var stack []int
	for i := range p.toks {
		t := &p.toks[i]
		if t.delim == 0 {
			continue
		}
		if t.canClose {
			found := -1
			for k := len(stack) - 1; k >= 0 && k >= len(stack)-maxOpeners; k-- {
				o := &p.toks[stack[k]]
				if o.delim == t.delim && o.n == t.n {
					found = k
					break
				}
			}
			if found >= 0 {
				o := &p.toks[stack[found]]
				o.open, t.close = true, true
				o.st = delimStyle(t.delim, t.n)
				stack = stack[:found]
				continue
			}
		}
		if t.canOpen {
			stack = append(stack, i)
		}
	}
}

func delimStyle(c byte, n int) style {
	switch {
	case c == '~':
		return sStrike
	case n == 1:
		return sEmph
	case n == 2:
		return sStrong
	}
	return sStrong | sEmph
}

// flatten gives every segment the styles of the pairs around it; matched delimiters are
// dropped (kept as text with marks).
func (p *inlineParser) flatten() []seg {
	var counts [8]int
	out := make([]seg, 0, len(p.toks))
	for _, t := range p.toks {
		if t.close {
			// the closer's style is its opener's: the same character and length
			st := delimStyle(t.delim, t.n)
			if p.marks {
				out = append(out, seg{t.segs[0].text, p.base | current(&counts)})
			}
			add(&counts, st, -1)
			continue
		}
		if t.open {
			add(&counts, t.st, 1)
			if p.marks {
				out = append(out, seg{t.segs[0].text, p.base | current(&counts)})
			}
			continue
		}
		cur := p.base | current(&counts)
		for _, sg := range t.segs {
			sg.st |= cur
			out = append(out, sg)
		}
	}
	return out
}

func add(counts *[8]int, st style, d int) {
	for b := range counts {
		if st&(1<<b) != 0 {
			counts[b] += d
		}
	}
}

func current(counts *[8]int) style {
	var st style
	for b, n := range counts {
		if n > 0 {
			st |= 1 << b
		}
	}
	return st
}

func isPunct(c byte) bool {
	return c < 0x80 && unicode.IsPunct(rune(c)) || c == '`' || c == '~' || c == '^' || c == '|' || c == '<' || c == '>' || c == '=' || c == '+' || c == '$'
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
