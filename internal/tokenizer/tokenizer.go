package tokenizer

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encoding is one of OpenAI's encodings.
type Encoding struct {
	name  string
	data  *string                   // the embedded vocabulary (see the package doc); a pointer, so that the encodings are static data, not built at load
	size  int                       // its number of tokens
	split func(s string, p int) int // the end of the piece that starts at p

	once sync.Once
	m    map[string]uint32
}

var (
	//go:embed o200k_base.bpe
	o200kData string
	//go:embed cl100k_base.bpe
	cl100kData string
)

var (
	o200k  = &Encoding{name: "o200k_base", data: &o200kData, size: 199998, split: splitO200k}
	cl100k = &Encoding{name: "cl100k_base", data: &cl100kData, size: 100256, split: splitCl100k}
)

// O200kBase is the encoding of the gpt-4o, gpt-4.1, gpt-5 and o-series models.
func O200kBase() *Encoding { return o200k }

// Cl100kBase is the encoding of gpt-4, gpt-4-turbo and gpt-3.5-turbo.
func Cl100kBase() *Encoding { return cl100k }

// Name is the encoding's name, e.g. "o200k_base".
func (e *Encoding) Name() string { return e.name }

// Count returns the number of tokens text encodes to.
func (e *Encoding) Count(text string) int {
	n := 0
	e.encode(text, func(uint32) { n++ })
	return n
}

// Encode returns the token ids (ranks) text encodes to.
func (e *Encoding) Encode(text string) []int {
	var ids []int
	e.encode(text, func(id uint32) { ids = append(ids, int(id)) })
	return ids
}

func (e *Encoding) encode(text string, yield func(uint32)) {
	e.once.Do(func() { e.m = e.ranks() })
	ranks := e.m
	text = validUTF8(text)
	var m merger
	for p := 0; p < len(text); {
		end := e.split(text, p)
		piece := text[p:end]
		if id, ok := ranks[piece]; ok {
			yield(id)
		} else {
			m.merge(piece, ranks, yield)
		}
		p = end
	}
}

// ranks reads the embedded vocabulary. The keys are substrings of the embedded data: nothing
// is copied. A vocabulary that does not read back whole is a build defect: it panics.
func (e *Encoding) ranks() map[string]uint32 {
	m := make(map[string]uint32, e.size)
	d := *e.data
	for len(d) > 0 {
		n, w := uvarint(d)
		if w <= 0 || len(d)-w < n {
			panic(fmt.Sprintf("tokenizer: %s: the embedded vocabulary is damaged after %d tokens", e.name, len(m)))
		}
		m[d[w:w+n]] = uint32(len(m))
		d = d[w+n:]
	}
	if len(m) != e.size {
		panic(fmt.Sprintf("tokenizer: %s: the embedded vocabulary has %d distinct tokens, want %d", e.name, len(m), e.size))
	}
	return m
}

// uvarint reads the uvarint that d begins with (a token's length: at most three bytes) and
// returns it and its width, or a width of 0 when d does not begin with one.
func uvarint(d string) (n, w int) {
	for shift := 0; w < len(d) && w < 3; shift += 7 {
		b := d[w]
		w++
		n |= int(b&0x7f) << shift
		if b < 0x80 {
			return n, w
		}
	}
	return 0, 0
}

// validUTF8 replaces each byte that does not begin a valid UTF-8 sequence with U+FFFD (as a
// conversion to []rune reads it), so that the split rules see runes only.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // range yields utf8.RuneError for each invalid byte
	}
	return b.String()
}
