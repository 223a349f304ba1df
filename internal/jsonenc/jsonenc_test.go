package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/jsonenc"
	"github.com/reinhq/rein/internal/jsonenc/jsonenctest"
)

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", v, err)
	}
	return b
}

func TestStringMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var all []string
	for c := range 256 { // every single byte, valid or not
		all = append(all, string([]byte{byte(c)}))
	}
	for r := rune(0); r < 0x3000; r++ {
		all = append(all, string(r))
	}
	all = append(all, "\U0010ffff", "\xf4\x90\x80\x80", "\xed\xa0\x80", "a\xe2\x80\xa8b\xe2\x80\xa9c\xe2\x80")
	for range 20000 {
		all = append(all, jsonenctest.RandString(rng))
	}
	for _, s := range all {
		if got, want := jsonenc.String(nil, s), marshal(t, s); !bytes.Equal(got, want) {
			t.Fatalf("String(%q) = %s, json.Marshal = %s", s, got, want)
		}
		if got, want := jsonenc.Text(nil, s), noHTML(t, s); !bytes.Equal(got, want) {
			t.Fatalf("Text(%q) = %s, encoding/json without HTML escaping = %s", s, got, want)
		}
	}
}

// noHTML is what encoding/json writes for v with HTML escaping off.
func noHTML(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding %#v: %v", v, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestStringEscapes(t *testing.T) {
	// The rules spelled out, so a change of encoding/json's output is seen here by name.
	for in, want := range map[string]string{
		"\b\f\n\r\t": `"\b\f\n\r\t"`, "\x00\x1f\x7f": `"\u0000\u001f` + "\x7f" + `"`,
		`<a>&"\`: `"\u003ca\u003e\u0026\"\\"`, "\u2028\u2029": `"\u2028\u2029"`,
		"a\xffb": `"a\ufffdb"`, "😀é": `"😀é"`,
	} {
		if got := string(jsonenc.String(nil, in)); got != want {
			t.Errorf("String(%q) = %s, want %s", in, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a", `"\`, "<>&", "\u2028", "\xff", "😀", "\x00\x1f", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := jsonenc.String([]byte("x"), s), append([]byte("x"), marshal(t, s)...); !bytes.Equal(got, want) {
			t.Fatalf("String(%q) = %s, json.Marshal = %s", s, got, want)
		}
		if got, want := jsonenc.Text(nil, s), noHTML(t, s); !bytes.Equal(got, want) {
			t.Fatalf("Text(%q) = %s, encoding/json without HTML escaping = %s", s, got, want)
		}
	})
}

func TestFloatMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fs := append([]float64{}, jsonenctest.Floats...)
	for e := -330; e <= 310; e++ {
		for _, m := range []float64{1, 9.999999, 1.5, 5} {
			fs = append(fs, m*math.Pow10(e), -m*math.Pow10(e))
		}
	}
	for range 50000 {
		fs = append(fs, jsonenctest.RandFloat(rng))
	}
	for _, f := range fs {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		got, err := jsonenc.Float(nil, f)
		if want := marshal(t, f); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Float(%v) = %s (%v), json.Marshal = %s", f, got, err, want)
		}
	}
}

func FuzzFloat(f *testing.F) {
	for _, v := range jsonenctest.Floats {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		got, err := jsonenc.Float(nil, v)
		want, werr := json.Marshal(v)
		if (err != nil) != (werr != nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("Float(%v) = %s (%v), json.Marshal = %s (%v)", v, got, err, want, werr)
		}
	})
}

func TestFloatRefusesWhatMarshalRefuses(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := jsonenc.Float(nil, f); err == nil || !strings.Contains(err.Error(), "unsupported value") {
			t.Errorf("Float(%v): %v, want an unsupported-value error", f, err)
		}
		if _, err := json.Marshal(f); err == nil {
			t.Errorf("json.Marshal(%v) succeeded; jsonenc.Float refuses it", f)
		}
	}
}

func TestBytesAndStringsMatchMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 70 {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		if got, want := jsonenc.Bytes(nil, p), marshal(t, p); !bytes.Equal(got, want) {
			t.Fatalf("Bytes(%x) = %s, json.Marshal = %s", p, got, want)
		}
	}
	if got, want := jsonenc.Bytes(nil, nil), marshal(t, []byte(nil)); !bytes.Equal(got, want) {
		t.Fatalf("Bytes(nil) = %s, json.Marshal = %s", got, want)
	}
	for _, ss := range [][]string{nil, {}, {"a"}, {"<", "\u2028", "\xff"}} {
		if got, want := jsonenc.Strings(nil, ss), marshal(t, ss); !bytes.Equal(got, want) {
			t.Fatalf("Strings(%q) = %s, json.Marshal = %s", ss, got, want)
		}
	}
}

type rawHolder struct {
	R json.RawMessage `json:"r"`
}

func rawVia(raw json.RawMessage) ([]byte, error) {
	b, err := jsonenc.Raw([]byte(`{"r":`), raw)
	return append(b, '}'), err
}

func TestRawMatchesMarshal(t *testing.T) {
	cases := append([]string{}, jsonenctest.RawValues...)
	cases = append(cases, "[1,\n2]", `"a\\"`, `"\\\"<"`, `{"a":"\u2028"}`, "\"\xe2\x80\xa8 \xe2\x80\xa9\"", "\"\xff\"", " 1 ")
	for _, c := range cases {
		want := marshal(t, rawHolder{json.RawMessage(c)})
		if got, err := rawVia(json.RawMessage(c)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("Raw(%q) = %s (%v), json.Marshal = %s", c, got, err, want)
		}
	}
	if got, want := jsonenc.Raw(nil, nil); string(got) != "null" || want != nil {
		t.Errorf("Raw(nil) = %s (%v), want null", got, want)
	}
}

func FuzzRaw(f *testing.F) {
	for _, c := range jsonenctest.RawValues {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := json.Marshal(rawHolder{raw})
		got, err := rawVia(raw)
		if (err != nil) != (werr != nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("Raw(%q) = %s (%v), json.Marshal = %s (%v)", raw, got, err, want, werr)
		}
		if err != nil && !strings.Contains(err.Error(), "not valid JSON") {
			t.Fatalf("Raw(%q): %v, want an invalid-JSON error", raw, err)
		}
	})
}
