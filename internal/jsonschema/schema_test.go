package jsonschema

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseWriteRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{`true`, `true`},
		{`false`, `false`},
		{`{}`, `true`},
		{`{"not":{}}`, `false`},
		{`{"required":["a"],"type":"object","properties":{"b":{},"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":true},"required":["a"]}`},
		{`{"x-vendor":{"k":[1,2.50]},"description":"d","type":["null","integer"],"minimum":1}`,
			`{"type":["null","integer"],"description":"d","minimum":1,"x-vendor":{"k":[1,2.50]}}`},
		{`{"items":[{"type":"string"}],"additionalItems":false,"dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
			`{"dependencies":{"a":["b"],"c":{"required":["d"]}},"items":[{"type":"string"}],"additionalItems":false}`},
		{`{"default":{"z":1,"a":[true]},"const":null,"enum":[1.0,"a"]}`, `{"default":{"a":[true],"z":1},"enum":[1.0,"a"],"const":null}`},
		{`{"minimum":2,"exclusiveMinimum":true}`, `{"exclusiveMinimum":2}`},
		// Draft 3's "required": true on a property is kept, not checked.
		{`{"properties":{"a":{"type":"string","required":true}}}`, `{"properties":{"a":{"type":"string","required":true}}}`},
	} {
		s, err := Parse([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		b, err := json.Marshal(s)
		if err != nil || string(b) != c.out {
			t.Errorf("%s written as %s (%v), want %s", c.in, b, err, c.out)
		}
	}
}

func TestParseRefusesWrongTypes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"minimum":"1"}`, `schema at #: "minimum" must be a number, not a string`},
		{`{"properties":{"a":{"maxLength":-1}}}`, `schema at #/properties/a: "maxLength" must be a non-negative integer`},
		{`{"required":"a"}`, `"required" must be an array of strings`},
		{`{"items":[{"type":3}]}`, `schema at #/items/0: "type" must be a type name`},
		{`{"properties":{"a":1}}`, `schema at #/properties/a: a schema is an object or a boolean, not a number`},
		{`{"multipleOf":0}`, `"multipleOf" must be a number above 0`},
		{`{"a":1} {}`, `data after the schema`},
		{`[1]`, `a schema is an object or a boolean`},
	} {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := Parse([]byte(`{"minItems":2.0,"x-unknown":{"minimum":"any"},"format":"made-up"}`)); err != nil {
		t.Errorf("unknown keywords and 2.0 as a count: %v", err)
	}
}

func TestIsTrueIsFalse(t *testing.T) {
	if !IsTrue(True()) || IsTrue(False()) || !IsFalse(False()) || IsFalse(True()) || IsTrue(nil) || IsFalse(&Schema{Not: True(), Type: "string"}) {
		t.Error("IsTrue/IsFalse disagree with True/False")
	}
}

type inner struct {
	Old string `json:"oldText" jsonschema:"text to replace"`
}

type Embedded struct {
	Shared string `json:"shared,omitempty"`
}

type outer struct {
	Embedded
	Path    string            `json:"path" jsonschema:"the path"`
	Edits   []inner           `json:"edits"`
	Limit   *int              `json:"limit,omitempty"`
	Tags    map[string]string `json:"tags,omitzero"`
	Small   uint8             `json:"small,omitempty"`
	Pair    [2]float64        `json:"pair,omitempty"`
	Any     any               `json:"any,omitempty" jsonschema:"anything"`
	When    time.Time         `json:"when,omitempty"`
	Skipped string            `json:"-"`
	hidden  string
	Plain   bool
}

func TestFor(t *testing.T) {
	s, err := For[outer]()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	want := `{"type":"object","properties":{"shared":{"type":"string"},"path":{"type":"string","description":"the path"},` +
		`"edits":{"type":["null","array"],"items":{"type":"object","properties":{"oldText":{"type":"string","description":"text to replace"}},"required":["oldText"],"additionalProperties":false}},` +
		`"limit":{"type":["null","integer"]},"tags":{"type":["null","object"],"additionalProperties":{"type":"string"}},` +
		`"small":{"type":"integer","minimum":0,"maximum":255},"pair":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2},` +
		`"any":{"description":"anything"},"when":{"type":"string"},"Plain":{"type":"boolean"}},` +
		`"required":["path","edits","Plain"],"additionalProperties":false}`
	if string(b) != want {
		t.Errorf("For[outer]:\n got %s\nwant %s", b, want)
	}
	_ = outer{}.hidden
	type node struct {
		Children []node `json:"children"`
	}
	if _, err := For[node](); err == nil || !strings.Contains(err.Error(), "refers to itself") {
		t.Errorf("recursive type: %v", err)
	}
	if _, err := For[map[int]string](); err == nil {
		t.Error("map[int]string inferred")
	}
	if _, err := For[struct{ F func() }](); err == nil {
		t.Error("func field inferred")
	}
}
