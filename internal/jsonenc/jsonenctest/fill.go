// Package jsonenctest checks hand-written JSON encoders against encoding/json: [Fill] sets
// every exported field of a value, recursively, to random and hostile content, and [Check]
// compares an encoder's bytes with json.Marshal's over many such values. A field the filler
// cannot fill (a kind it does not know) fails the test instead of being skipped, so a type
// that grows a field of a new shape is noticed.
package jsonenctest

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
)

// Fill sets every exported field of the value v points to. Each pointer, slice, map and
// scalar is left zero (or nil) some of the time, so omitempty and null are exercised too.
// It reports the first type it cannot fill, or "".
func Fill(rng *rand.Rand, v any) string {
	return fill(plainRand{rng}, reflect.ValueOf(v).Elem(), 0)
}

// FillValid is Fill with every string valid UTF-8 (invalid bytes become U+FFFD), for checks
// of what decodes back to itself.
func FillValid(rng *rand.Rand, v any) string {
	return fill(validRand{rng}, reflect.ValueOf(v).Elem(), 0)
}

// source is what fill draws from: a *rand.Rand, or one whose strings are valid UTF-8.
type source interface {
	IntN(n int) int
	Uint32() uint32
	Uint64() uint64
	str() string
}

type plainRand struct{ *rand.Rand }

func (r plainRand) str() string { return RandString(r.Rand) }

type validRand struct{ *rand.Rand }

func (r validRand) str() string { return strings.ToValidUTF8(RandString(r.Rand), "\ufffd") }

var rawType = reflect.TypeFor[json.RawMessage]()

func fill(rng source, v reflect.Value, depth int) string {
	if v.Type() == rawType {
		if rng.IntN(4) > 0 {
			v.SetBytes([]byte(RawValues[rng.IntN(len(RawValues))]))
		} else if rng.IntN(2) == 0 {
			v.SetBytes([]byte{})
		}
		return ""
	}
	zero := rng.IntN(5) == 0 // a fifth of the values stay zero
	switch v.Kind() {
	case reflect.String:
		if !zero {
			v.SetString(rng.str())
		}
	case reflect.Bool:
		v.SetBool(!zero && rng.IntN(4) > 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		if !zero {
			v.SetInt(randInt(rng, v.Type().Bits()))
		}
	case reflect.Float64:
		if !zero {
			v.SetFloat(randFloat(rng))
		}
	case reflect.Pointer:
		if zero || depth > 4 {
			return ""
		}
		p := reflect.New(v.Type().Elem())
		if bad := fill(rng, p.Elem(), depth+1); bad != "" {
			return bad
		}
		v.Set(p)
	case reflect.Slice:
		return fillSlice(rng, v, zero, depth)
	case reflect.Map:
		return fillMap(rng, v, zero)
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if bad := fill(rng, v.Field(i), depth+1); bad != "" {
				return bad
			}
		}
	default:
		return v.Type().String()
	}
	return ""
}

func fillSlice(rng source, v reflect.Value, zero bool, depth int) string {
	if zero {
		return ""
	}
	if v.Type().Elem().Kind() == reflect.Uint8 {
		p := make([]byte, rng.IntN(40))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		v.SetBytes(p)
		return ""
	}
	n := rng.IntN(4) // 0: an empty, non-nil slice
	s := reflect.MakeSlice(v.Type(), n, n)
	for i := range n {
		if bad := fill(rng, s.Index(i), depth+1); bad != "" {
			return bad
		}
	}
	v.Set(s)
	return ""
}

func fillMap(rng source, v reflect.Value, zero bool) string {
	if zero {
		return ""
	}
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		return t.String()
	}
	m := reflect.MakeMap(t)
	for range rng.IntN(5) {
		k := reflect.New(t.Key()).Elem()
		k.SetString(rng.str())
		e := reflect.New(t.Elem()).Elem()
		if bad := fill(rng, e, 0); bad != "" {
			return bad
		}
		m.SetMapIndex(k, e)
	}
	v.Set(m)
	return ""
}

// pieces are the parts random strings are made of: every byte class encoding/json treats
// specially.
var pieces = []string{
	"a", "hello", " ", `"`, `\`, "/", "<", ">", "&", "<script>", "\n", "\r", "\t", "\b", "\f",
	"\x00", "\x01", "\x1f", "\x7f", "\u2028", "\u2029", "\u2027", "é", "日本", "😀", "\ufffd",
	"\xff", "\xe2\x80", "\xe2\x80\xa8", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "u00e9", "\\u2028",
}

// RandString returns a string of random pieces: quotes, backslashes, control bytes, HTML
// characters, line separators, multi-byte and invalid UTF-8.
func RandString(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(8) {
		if rng.IntN(6) == 0 {
			b.WriteByte(byte(rng.Uint32()))
			continue
		}
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// Floats are magnitudes around every switch of encoding/json's number format.
var Floats = []float64{
	0, math.Copysign(0, -1), 0.1, -0.1, 1, -1, 1.5, 100, 1e6, 123456789, 1 << 53, 1<<53 + 1, -(1 << 62),
	1e-6, 9.999999e-7, 1e-7, 1.234e-7, 5e-324, math.SmallestNonzeroFloat64, 1e20, 999999999999999999999.0,
	1e21, 1.5e21, 1e100, -1e-100, math.MaxFloat64, 0.000001234, 3.14159, 2.5e-5, 1e-10, 123e-20,
}

// RandFloat returns a float from Floats, scaled by a random power of ten, or random bits.
func RandFloat(rng *rand.Rand) float64 { return randFloat(plainRand{rng}) }

func randFloat(rng source) float64 {
	switch rng.IntN(3) {
	case 0:
		return Floats[rng.IntN(len(Floats))]
	case 1:
		f := Floats[rng.IntN(len(Floats))] * math.Pow10(rng.IntN(60)-30)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return 1
		}
		return f
	}
	f := math.Float64frombits(rng.Uint64())
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return -2.5
	}
	return f
}

func randInt(rng source, bits int) int64 {
	switch rng.IntN(3) {
	case 0:
		return int64(rng.IntN(100)) - 50
	case 1:
		return int64(rng.Uint64()) >> (64 - bits)
	}
	return int64(rng.IntN(1 << 20))
}

// RawValues are valid JSON texts with whitespace, escapes and characters a compactor must
// treat correctly.
var RawValues = []string{
	`{}`, `null`, `0`, `-1.5e3`, `"s"`, `true`, ` { "a" : [ 1 , 2 ] } `, "\n\t{\"k\":\r\n\"v\"}\n",
	`{"html":"<a href=\"x\">&amp;</a>"}`, "[\"\u2028\u2029\", \"x\"]", `{"q":"a \" b \\ c","n":{"m":[]}}`,
	`["a b", " c ", "\\\"", "\u00e9\ud83d\ude00"]`, `{"a":{"b":{"c":[true,false,null]}}}`, `"\u003c"`,
}
