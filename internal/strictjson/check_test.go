package strictjson

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// corpus is JSON (valid or not) from this package's, internal/tool's and internal/ledger's
// tests, plus inputs aimed at each rule Check and Decode share.
var corpus = []string{
	// parse_test.go and unmarshal_test.go
	` [1, {"a": "x\u00e9\n"}, true, null] `,
	`[{"a":1,"a":2}]`,
	`{"a":[1,]}`,
	`1 2`,
	"\"\xff\"",
	`{"a":01}`,
	`"a` + "\t" + `"`,
	`{"a":-}`,
	`{"id":"x","contextWindow":5,"cost":{"input":1.5},"list":[{"input":2}],"byName":{"Any Key":{"input":3}},"ptr":{"input":4}}`,
	`{"id":"a","id":"b"}`,
	`{"id":"x"} {}`,
	"{\"id\":\"\xff\"}",
	// internal/tool/validate_test.go
	`{"path":"a.go","edits":[{"oldText":"x","newText":"y"}],"limit":3,"mode":"fast"}`,
	" \n{\"path\":\"a\",\"edits\":[{\"oldText\":\"\",\"newText\":\"\"}],\"limit\":null}\n ",
	`{"path":"a","edits":[{"oldText":"x","newText":"y"}],"limit":2.0}`,
	`{"path":"a","path":"b","edits":[]}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y"},{"oldText":"x","newText":"y","newText":"z"}]}`,
	"{\"path\":\"a\xff\",\"edits\":[]}",
	`{"path":"a","edits":[{"oldText":"x","newText":"y"}]} {"x":1}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y"}]}}`,
	`{"path":"a","edits":[{"oldText":"x`,
	`{"path":"a","edits":"[{\"oldText\":\"x\",\"newText\":\"y\"}]","limit":12345678901234567}`,
	`{"path":1,"edits":[{"oldText":"` + strings.Repeat("é", 50) + `","newText":""}]}`,
	`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}},"additionalProperties":false}`,
	`{"type":`,
	// internal/ledger: a line, its payload, and the fuzz seeds
	ledgerLine,
	`{"v":1,"seq":1,"id":"L1","parentId":null,"kind":"header","ts":"2026-01-02T03:04:05Z","body":{"type":"session","id":"L1","format":1},"prev":""}`,
	` {,"h":"` + strings.Repeat("0", 64) + `"}`,
	`{"v":2,"seq":3}`,
	`{"tool":"read","tool":1,"x":{}}`,
	// escapes, including keys that only collide once decoded
	`{"a":1,"\u0061":2}`,
	`{"\ud800":1,"\udc00":2}`,
	`{"\ud83d\ude00":1,"😀":2}`,
	`"\u12"`, `"\u12G4"`, `"\x"`, `"\/\b\f\n\r\t\\\""`, `"\uD834\uDD1E"`, `"\u00e9"`, `"\` + "\x01" + `"`, `"\`, `"\"`,
	`"\u` + "é" + `"`, `"\é"`,
	// numbers and literals
	`-0`, `-01`, `1.`, `1.e5`, `1e`, `1e+`, `1E-7`, `-`, `0.0e0`, `00`, `+1`, `.5`, `1.5.2`,
	`tru`, `truex`, `nul`, `falsey`, `[true,false,null]`, `NaN`, `Infinity`,
	// structure
	``, ` `, `{`, `[`, `}`, `]`, `{"a"}`, `{"a" 1}`, `{"a":1,}`, `{,}`, `[,]`, `[1 2]`, `{"a":1 "b":2}`, `{1:2}`,
	`{"a":{"b":{"c":[{"d":1,"d":2}]}}}`, `{"a":{"x":1},"b":{"x":1}}`, `[{"a":1},{"a":1}]`,
	"\ufeff{}", "{}\x00", "[\"a\nb\"]", "\t\r\n{}\t\r\n",
	strings.Repeat("[", 256) + strings.Repeat("]", 256),
	strings.Repeat("[", 257) + strings.Repeat("]", 257),
	strings.Repeat(`{"a":`, 256) + "1" + strings.Repeat("}", 256),
	strings.Repeat(`{"a":`, 257) + "1" + strings.Repeat("}", 257),
	manyKeys(40, -1), manyKeys(40, 3), manyKeys(40, 39), manyKeys(17, 16), manyKeys(16, 15),
	`{"x":[` + manyKeys(20, 19) + `],"y":` + manyKeys(5, -1) + `}`,
}

// ledgerLine is a ledger record as written.
var ledgerLine = `{"v":1,"seq":3,"id":"e3","parentId":"e2","kind":"intent","ts":"2026-01-02T03:04:05Z","body":{"tool":"read","args":{"path":"a.go"},"n":[1,2.5,null,true]},"prev":"` + strings.Repeat("ab", 32) + `","h":"` + strings.Repeat("0f", 32) + `"}`

// manyKeys is an object with n keys; key dup (if ≥ 0) repeats key 0 with an escape.
func manyKeys(n, dup int) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		if i == dup {
			sb.WriteString(`"k\u0030":0`)
			continue
		}
		fmt.Fprintf(&sb, `"k%d":{"k%d":%d}`, i, i, i)
	}
	sb.WriteByte('}')
	return sb.String()
}

// sameVerdict fails unless Check and Decode agree on text: both accept, or both refuse with
// the same message.
func sameVerdict(t *testing.T, text string) {
	t.Helper()
	_, derr := Decode(text)
	cerr := Check([]byte(text))
	if fmt.Sprint(derr) != fmt.Sprint(cerr) {
		t.Fatalf("on %q:\nDecode: %v\nCheck:  %v", text, derr, cerr)
	}
}

func TestCheckMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, in := range corpus {
		sameVerdict(t, in)
		n++
		// Prefixes, and single-byte substitutions with a byte that matters: at every offset
		// of a short input, at 100 random ones of a long one.
		offsets := rng.Perm(len(in))
		if len(offsets) > 100 {
			offsets = offsets[:100]
		}
		for _, i := range offsets {
			sameVerdict(t, in[:i])
			for _, c := range []byte("\"\\{}[],:0-eu \x00\x1f\xc3") {
				sameVerdict(t, in[:i]+string(c)+in[i+1:])
			}
			n += 16
		}
	}
	for range 20000 {
		sameVerdict(t, genJSON(rng, 0, rng.IntN(2) == 0))
		n++
	}
	t.Logf("%d inputs", n)
}

// genJSON makes a random value with the mistakes strict parsing looks for. Without sloppy
// its only possible mistake is a duplicate key, so that those are reached often.
func genJSON(rng *rand.Rand, depth int, sloppy bool) string {
	pick := func(valid []string, invalid ...string) string {
		if sloppy && rng.IntN(3) == 0 {
			return invalid[rng.IntN(len(invalid))]
		}
		return valid[rng.IntN(len(valid))]
	}
	switch k := rng.IntN(10); {
	case k < 3 && depth < 4:
		var sb strings.Builder
		sb.WriteString(pick([]string{"{", "{ ", "{\n"}, "{{", "{,"))
		n := rng.IntN(6)
		if rng.IntN(5) == 0 {
			n = 10 + rng.IntN(30) // past smallObject: Check's duplicate test switches to a map
		}
		keys := []string{"a", "b", `\u0061`, "a b", "é", `\ud800`, `\udc00`, "", `x\n`, "k"}
		for i := range n {
			if i > 0 {
				sb.WriteString(pick([]string{",", ", ", ",\n"}, ",,", ":", " "))
			}
			key := fmt.Sprint("k", i)
			if rng.IntN(4) == 0 {
				key = keys[rng.IntN(len(keys))]
			}
			sb.WriteString(`"` + key + pick([]string{`":`, `" : `}, `"`, `":,`) + genJSON(rng, depth+1, sloppy))
		}
		sb.WriteString(pick([]string{"}", " }"}, "]", "", ",}"))
		return sb.String()
	case k < 5 && depth < 4:
		var parts []string
		for range rng.IntN(6) {
			parts = append(parts, genJSON(rng, depth+1, sloppy))
		}
		return "[" + strings.Join(parts, pick([]string{",", ", "}, " ", ",,")) + pick([]string{"]"}, ",]", "", "}")
	case k < 7:
		return `"` + pick([]string{"x", "", "é😀", `\n`, `\u00e9`, `\uD83D\uDE00`, `\ud800`, `\/`, `\"`},
			`\u12`, `\q`, "\x01", `\`+"\x01", "\t", `a"b`, `\u00zz`, `\`) + pick([]string{`"`}, "")
	case k < 9:
		return pick([]string{"0", "-0", "12", "1.5", "-1e9", "1E+2", "2.5e-3", "9999999999999999999999"},
			"01", "1.", "-", "1e", ".5", "+1", "0x1")
	default:
		return pick([]string{"true", "false", "null", "[]", "{}"}, "tru", "nulls", "[1]1", "nan", "\xff")
	}
}

// FuzzCheckMatchesDecode: Check and Decode accept the same inputs and refuse the others with
// the same message.
func FuzzCheckMatchesDecode(f *testing.F) {
	for _, in := range corpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameVerdict(t, string(data))
	})
}

// FuzzDecodeIsJSON pins the grammar to encoding/json's: whatever Decode accepts is JSON, and
// JSON without objects (so without duplicate keys) that is valid UTF-8 and nested at most
// maxJSONDepth deep is accepted, and decodes to the same value.
func FuzzDecodeIsJSON(f *testing.F) {
	for _, in := range corpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(string(data))
		if err == nil {
			if !json.Valid(data) {
				t.Fatalf("Decode accepted %q, which is not JSON", data)
			}
			return
		}
		if strings.ContainsRune(string(data), '{') || strings.Count(string(data), "[") > maxJSONDepth ||
			strings.Contains(err.Error(), "not valid UTF-8") || !json.Valid(data) {
			return
		}
		t.Fatalf("Decode refused JSON %q: %v (value %v)", data, err, v)
	})
}

// TestSpecial8 compares the eight-bytes-at-a-time search with the byte-at-a-time one for every
// byte value in every position, among plain bytes and among random ones.
func TestSpecial8(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		var w [8]byte
		for i := range w {
			w[i] = 'a'
			if round > 0 {
				w[i] = byte(rng.IntN(256))
			}
		}
		for pos := range 8 {
			for c := range 256 {
				v := w
				v[pos] = byte(c)
				want := 8
				for i, b := range v {
					if !plainByte[b] {
						want = i
						break
					}
				}
				got := 8
				if m := special8(binary.LittleEndian.Uint64(v[:])); m != 0 {
					got = bits.TrailingZeros64(m) / 8
				}
				if got != want {
					t.Fatalf("first special byte of %q: %d, want %d", v, got, want)
				}
				if i := skipPlain(append(v[:], 'a', '"'), 0); min(i, 8) != want {
					t.Fatalf("skipPlain(%q) = %d, want %d", v, i, want)
				}
			}
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	line := []byte(ledgerLine)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := Check(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	line := ledgerLine
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}
