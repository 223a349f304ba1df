package tokenizer

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var encodings = []*Encoding{O200kBase(), Cl100kBase()}

// referenceCase is a line of testdata/reference.jsonl (see testdata/generate.cjs): a text and,
// per encoding, its token count and the first 16 hex digits of the SHA-256 of its token ids
// joined by ",".
type referenceCase struct {
	Text   string
	Counts map[string]struct {
		N    int
		Hash string
	}
}

func referenceCases(t testing.TB) []referenceCase {
	t.Helper()
	f, err := os.Open("testdata/reference.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []referenceCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		c := referenceCase{Counts: map[string]struct {
			N    int
			Hash string
		}{}}
		if err := json.Unmarshal(raw["text"], &c.Text); err != nil {
			t.Fatal(err)
		}
		for _, e := range encodings {
			var v [2]any
			if err := json.Unmarshal(raw[e.Name()], &v); err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			n, _ := v[0].(float64)
			h, _ := v[1].(string)
			c.Counts[e.Name()] = struct {
				N    int
				Hash string
			}{int(n), h}
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 2000 {
		t.Fatalf("testdata/reference.jsonl has only %d texts", len(out))
	}
	return out
}

func idsHash(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	sum := sha256.Sum256([]byte(strings.Join(s, ",")))
	return hex.EncodeToString(sum[:8])
}

// TestAgreesWithTheReference: every text of the corpus encodes to exactly the reference
// implementation's token ids, in both encodings.
func TestAgreesWithTheReference(t *testing.T) {
	cases := referenceCases(t)
	for _, e := range encodings {
		bad := 0
		for _, c := range cases {
			want := c.Counts[e.Name()]
			ids := e.Encode(c.Text)
			if len(ids) != want.N || idsHash(ids) != want.Hash {
				if bad++; bad <= 5 {
					t.Errorf("%s: %.80q: %d tokens (ids %s), want %d (%s)", e.Name(), c.Text, len(ids), idsHash(ids), want.N, want.Hash)
				}
			}
			if n := e.Count(c.Text); n != len(ids) {
				t.Errorf("%s: Count(%.80q) = %d, Encode has %d", e.Name(), c.Text, n, len(ids))
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d texts encode differently", e.Name(), bad, len(cases))
		}
	}
}

// TestVocabularies: the embedded vocabularies read back whole, every token distinct, the
// byte-level base (every single byte is a token) there.
func TestVocabularies(t *testing.T) {
	for _, e := range encodings {
		ranks := e.ranks()
		if len(ranks) != e.size {
			t.Errorf("%s: %d ranks, want %d", e.Name(), len(ranks), e.size)
		}
		for b := range 256 {
			if _, ok := ranks[string([]byte{byte(b)})]; !ok {
				t.Errorf("%s: no token for byte %#x", e.Name(), b)
			}
		}
	}
	// A damaged vocabulary is refused, not read short.
	for _, data := range []string{"\x05ab", "\x80", "\x01a\x01a"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("vocabulary %q: no panic", data)
				}
			}()
			(&Encoding{name: "test", data: &data, size: 2}).ranks()
		}()
	}
}

// TestPiecesCoverTheText: the split rules cut any text into pieces that end where the next
// begins and never stop short or split a rune.
func TestPiecesCoverTheText(t *testing.T) {
	for _, c := range referenceCases(t) {
		for _, split := range []func(string, int) int{splitO200k, splitCl100k} {
			for p := 0; p < len(c.Text); {
				e := split(c.Text, p)
				if e <= p || e > len(c.Text) || !utf8.ValidString(c.Text[p:e]) {
					t.Fatalf("split(%.60q, %d) = %d", c.Text, p, e)
				}
				p = e
			}
		}
	}
}

func TestClasses(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		u := unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
		w := unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
		s := !unicode.In(r, unicode.L, unicode.N) && !unicode.IsSpace(r)
		if inU(r) != u || inW(r) != w || inS(r) != s {
			t.Fatalf("%U: inU %v (want %v), inW %v (want %v), inS %v (want %v)", r, inU(r), u, inW(r), w, inS(r), s)
		}
	}
}

// TestInvalidUTF8: each byte that does not begin a valid sequence counts as U+FFFD.
func TestInvalidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"\xff\xfe invalid": "\ufffd\ufffd invalid", "a\xc3(b": "a\ufffd(b", "\xed\xa0\x80": "\ufffd\ufffd\ufffd",
		"\xf0\x9f\x98": "\ufffd\ufffd\ufffd", "ok é": "ok é",
	} {
		if got := validUTF8(in); got != want {
			t.Errorf("validUTF8(%q) = %q, want %q", in, got, want)
		}
		for _, e := range encodings {
			if got, want := e.Encode(in), e.Encode(want); idsHash(got) != idsHash(want) {
				t.Errorf("%s: Encode(%q) = %v, want %v", e.Name(), in, got, want)
			}
		}
	}
}

func BenchmarkCount(b *testing.B) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	for _, e := range encodings {
		e.Count("") // the vocabulary, read once per process
		b.Run(e.Name(), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				e.Count(text)
			}
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		O200kBase().ranks()
	}
}
