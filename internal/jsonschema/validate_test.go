package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/strictjson"
)

// check resolves schema and validates instance (decoded as rein decodes arguments).
func check(t *testing.T, schema, instance string) error {
	t.Helper()
	s, err := Parse([]byte(schema))
	if err != nil {
		t.Fatalf("parse %s: %v", schema, err)
	}
	r, err := Resolve(s)
	if err != nil {
		t.Fatalf("resolve %s: %v", schema, err)
	}
	v, err := strictjson.Decode(instance)
	if err != nil {
		t.Fatalf("instance %s: %v", instance, err)
	}
	return r.Validate(v)
}

type kwCase struct {
	schema string
	valid  []string
	// invalid instances, each with the keyword its first problem must name
	invalid map[string]string
}

var keywordCases = map[string]kwCase{
	"type":                                 {`{"type":"string"}`, []string{`"x"`}, map[string]string{`1`: "type", `null`: "type"}},
	"type array":                           {`{"type":["null","integer"]}`, []string{`null`, `3`, `3.0`}, map[string]string{`3.5`: "type", `"3"`: "type"}},
	"integer":                              {`{"type":"integer"}`, []string{`1`, `-0`, `1e2`}, map[string]string{`1.5`: "type", `true`: "type"}},
	"number":                               {`{"type":"number"}`, []string{`1`, `1.5`}, map[string]string{`"1"`: "type"}},
	"enum":                                 {`{"enum":["a",1,null,{"k":[1]}]}`, []string{`"a"`, `1.0`, `null`, `{"k":[1]}`}, map[string]string{`"b"`: "enum", `{"k":[2]}`: "enum"}},
	"const":                                {`{"const":{"a":1}}`, []string{`{"a":1.0}`}, map[string]string{`{"a":2}`: "const", `{}`: "const"}},
	"const null":                           {`{"const":null}`, []string{`null`}, map[string]string{`0`: "const"}},
	"multipleOf":                           {`{"multipleOf":0.01}`, []string{`0.07`, `3`, `"x"`}, map[string]string{`0.075`: "multipleOf"}},
	"minimum":                              {`{"minimum":1,"maximum":3}`, []string{`1`, `3`}, map[string]string{`0.5`: "minimum", `3.1`: "maximum"}},
	"exclusive":                            {`{"exclusiveMinimum":1,"exclusiveMaximum":3}`, []string{`2`}, map[string]string{`1`: "exclusiveMinimum", `3`: "exclusiveMaximum"}},
	"draft-04 excl":                        {`{"minimum":1,"exclusiveMinimum":true,"maximum":3,"exclusiveMaximum":false}`, []string{`2`, `3`}, map[string]string{`1`: "exclusiveMinimum"}},
	"length runes":                         {`{"minLength":2,"maxLength":3}`, []string{`"éé"`, `"日本語"`}, map[string]string{`"é"`: "minLength", `"abcd"`: "maxLength"}},
	"pattern":                              {`{"pattern":"^[a-z]+\\d$"}`, []string{`"ab1"`, `5`}, map[string]string{`"ab"`: "pattern"}},
	"pattern Go cannot compile is skipped": {`{"pattern":"^(?!x)"}`, []string{`"x"`, `"y"`}, nil},
	"items":                                {`{"items":{"type":"integer"}}`, []string{`[]`, `[1,2]`}, map[string]string{`[1,"a"]`: "type"}},
	"prefixItems":                          {`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, []string{`["a",1]`, `["a"]`}, map[string]string{`[1]`: "type", `["a","b"]`: "type"}},
	"prefixItems, items false":             {`{"prefixItems":[{}],"items":false}`, []string{`[1]`}, map[string]string{`[1,2]`: "items"}},
	"draft-07 items array":                 {`{"items":[{"type":"string"},{"type":"number"}],"additionalItems":false}`, []string{`["a",1]`, `["a"]`}, map[string]string{`[1]`: "type", `["a",1,2]`: "additionalItems"}},
	"draft-07 items array, no additionalItems": {`{"items":[{"type":"string"}]}`, []string{`["a",1,{}]`}, nil},
	"contains":      {`{"contains":{"const":2}}`, []string{`[1,2]`}, map[string]string{`[1]`: "contains", `[]`: "contains"}},
	"minContains":   {`{"contains":{"const":2},"minContains":2,"maxContains":3}`, []string{`[2,2]`, `[2,1,2,2]`}, map[string]string{`[2]`: "contains", `[2,2,2,2]`: "maxContains"}},
	"minContains 0": {`{"contains":{"const":2},"minContains":0}`, []string{`[]`, `[1]`}, nil},
	"items bounds":  {`{"minItems":1,"maxItems":2}`, []string{`[1]`, `[1,2]`}, map[string]string{`[]`: "minItems", `[1,2,3]`: "maxItems"}},
	"uniqueItems":   {`{"uniqueItems":true}`, []string{`[1,"1",[1],{"a":1},{"a":2}]`}, map[string]string{`[1,1.0]`: "uniqueItems", `[{"a":[1]},{"a":[1]}]`: "uniqueItems"}},
	"properties":    {`{"properties":{"a":{"type":"string"}}}`, []string{`{}`, `{"a":"x","b":1}`, `[1]`}, map[string]string{`{"a":1}`: "type"}},
	"required":      {`{"required":["a","b"]}`, []string{`{"a":1,"b":null}`}, map[string]string{`{"a":1}`: "required"}},
	"additionalProperties": {`{"properties":{"a":{}},"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":{"type":"string"}}`,
		[]string{`{"a":[],"x-n":1,"other":"s"}`}, map[string]string{`{"x-n":"s"}`: "type", `{"other":1}`: "type"}},
	"additionalProperties false": {`{"properties":{"a":{}},"additionalProperties":false}`, []string{`{"a":1}`}, map[string]string{`{"b":1}`: "additionalProperties"}},
	"patternProperties Go cannot compile opens the object": {`{"patternProperties":{"^(?=a)":{"type":"integer"}},"additionalProperties":false}`,
		[]string{`{"abc":"not checked"}`}, nil},
	"propertyNames":     {`{"propertyNames":{"maxLength":3}}`, []string{`{"abc":1}`}, map[string]string{`{"abcd":1}`: "propertyNames"}},
	"min/maxProperties": {`{"minProperties":1,"maxProperties":2}`, []string{`{"a":1}`}, map[string]string{`{}`: "minProperties", `{"a":1,"b":2,"c":3}`: "maxProperties"}},
	"dependentRequired": {`{"dependentRequired":{"a":["b"]}}`, []string{`{}`, `{"b":1}`, `{"a":1,"b":2}`}, map[string]string{`{"a":1}`: "dependentRequired"}},
	"dependentSchemas":  {`{"dependentSchemas":{"a":{"required":["b"]}}}`, []string{`{"b":1}`, `{"a":1,"b":2}`}, map[string]string{`{"a":1}`: "required"}},
	"draft-07 dependencies": {`{"dependencies":{"a":["b"],"c":{"properties":{"d":{"type":"string"}}}}}`,
		[]string{`{"c":1,"d":"x"}`, `{"a":1,"b":1}`}, map[string]string{`{"a":1}`: "dependentRequired", `{"c":1,"d":1}`: "type"}},
	"allOf": {`{"allOf":[{"minimum":1},{"maximum":3}]}`, []string{`2`}, map[string]string{`0`: "minimum", `4`: "maximum"}},
	"anyOf": {`{"anyOf":[{"type":"string"},{"minimum":10}]}`, []string{`"a"`, `11`}, map[string]string{`5`: "anyOf"}},
	"oneOf": {`{"oneOf":[{"type":"integer"},{"minimum":2}]}`, []string{`1`, `2.5`}, map[string]string{`3`: "oneOf", `1.5`: "oneOf"}},
	"not":   {`{"not":{"type":"string"}}`, []string{`1`}, map[string]string{`"a"`: "not"}},
	"if/then/else": {`{"if":{"properties":{"kind":{"const":"file"}}},"then":{"required":["path"]},"else":{"required":["url"]}}`,
		[]string{`{"kind":"file","path":"p"}`, `{"kind":"web","url":"u"}`}, map[string]string{`{"kind":"file"}`: "required", `{"kind":"web"}`: "required"}},
	"boolean schemas":         {`{"properties":{"yes":true,"no":false}}`, []string{`{"yes":[1]}`}, map[string]string{`{"no":1}`: "properties"}},
	"format is an annotation": {`{"format":"email","type":"string"}`, []string{`"not an email"`}, nil},
	"unevaluatedProperties with allOf": {`{"allOf":[{"properties":{"a":{}}}],"properties":{"b":{}},"unevaluatedProperties":false}`,
		[]string{`{"a":1,"b":2}`}, map[string]string{`{"a":1,"c":3}`: "unevaluatedProperties"}},
	"unevaluatedProperties with $ref": {`{"$defs":{"base":{"properties":{"id":{"type":"string"}}}},"$ref":"#/$defs/base","properties":{"name":{}},"unevaluatedProperties":false}`,
		[]string{`{"id":"1","name":"n"}`}, map[string]string{`{"id":"1","extra":1}`: "unevaluatedProperties"}},
	"unevaluatedProperties ignores failed branches": {`{"anyOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}],"unevaluatedProperties":false}`,
		[]string{`{"a":"x"}`, `{"b":1}`}, map[string]string{`{"a":1,"b":1}`: "unevaluatedProperties"}},
	"unevaluatedItems": {`{"prefixItems":[{"type":"string"}],"allOf":[{"prefixItems":[{},{"type":"integer"}]}],"unevaluatedItems":false}`,
		[]string{`["a",1]`}, map[string]string{`["a",1,2]`: "unevaluatedItems"}},
	"unevaluatedItems with contains": {`{"contains":{"type":"string"},"unevaluatedItems":{"type":"integer"}}`,
		[]string{`["a",1,"b"]`}, map[string]string{`["a",true]`: "type"}},
}

func TestKeywords(t *testing.T) {
	for name, c := range keywordCases {
		t.Run(name, func(t *testing.T) {
			for _, v := range c.valid {
				if err := check(t, c.schema, v); err != nil {
					t.Errorf("%s refused %s: %v", c.schema, v, err)
				}
			}
			for v, kw := range c.invalid {
				err := check(t, c.schema, v)
				var e *Error
				if !errors.As(err, &e) {
					t.Errorf("%s accepted %s (want a %s problem)", c.schema, v, kw)
					continue
				}
				if !strings.Contains(err.Error(), "("+kw+")") {
					t.Errorf("%s on %s: %v, want a problem naming %s", c.schema, v, err, kw)
				}
			}
		})
	}
}

func TestProblemNamesPathAndKeyword(t *testing.T) {
	err := check(t, `{"properties":{"edits":{"items":{"properties":{"old text":{"type":"string"}}}}}}`, `{"edits":[{"old text":"a"},{"old text":2}]}`)
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 1 {
		t.Fatalf("got %v", err)
	}
	p := e.Problems[0]
	if p.Path != `edits[1]["old text"]` || p.Keyword != "type" || p.String() != `edits[1]["old text"]: expected string, got integer (type)` {
		t.Errorf("problem %+v, %q", p, p.String())
	}
	err = check(t, `{"type":"object"}`, `[]`)
	if err == nil || err.Error() != "(root): expected object, got array (type)" {
		t.Errorf("root problem: %v", err)
	}
}

func TestValidateGoValues(t *testing.T) {
	s, _ := Parse([]byte(`{"type":"object","properties":{"n":{"type":"integer","maximum":3}}}`))
	r, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(map[string]any{"n": 2.0}); err != nil {
		t.Errorf("float64 2: %v", err)
	}
	if err := r.Validate(map[string]any{"n": 4}); err == nil {
		t.Error("int 4 accepted over maximum 3")
	}
	if err := r.Validate(map[string]any{"n": json.Number("2.5")}); err == nil {
		t.Error("2.5 accepted as an integer")
	}
}

func TestHugeExponentsStayCheap(t *testing.T) {
	for _, c := range []struct{ schema, instance string }{
		{`{"multipleOf":3}`, `1e999999999`},
		{`{"type":"integer"}`, `1.5e-999999999`},
		{`{"enum":[1e999999999]}`, `2e999999999`},
		{`{"uniqueItems":true}`, `[1e999999999,1e-999999999]`},
	} {
		_ = check(t, c.schema, c.instance) // must return promptly; the result is float64's
	}
	if err := check(t, `{"type":"integer"}`, `1e-999999999`); err == nil {
		t.Error("1e-999999999 accepted as an integer")
	}
}

func TestCostlySchemasStop(t *testing.T) {
	// Each level doubles the work; 40 levels would be 2^40 applications.
	defs := []string{`"l40":{"type":"integer"}`}
	for i := 39; i >= 0; i-- {
		defs = append(defs, fmt.Sprintf(`"l%d":{"anyOf":[{"$ref":"#/$defs/l%d"},{"$ref":"#/$defs/l%d"}],"not":{"const":-1}}`, i, i+1, i+1))
	}
	schema := `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/l0"}`
	err := check(t, schema, `"not an integer"`)
	if err == nil || !strings.Contains(err.Error(), "too costly") {
		t.Errorf("costly schema: %v", err)
	}
	err = check(t, `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, `1`)
	if err == nil || !strings.Contains(err.Error(), "leads back to itself") {
		t.Errorf("self-reference: %v", err)
	}
}

func TestEqualNumbersExactly(t *testing.T) {
	for _, c := range []struct {
		a, b string
		eq   bool
	}{
		{"1", "1.0", true}, {"1", "10e-1", true}, {"-2.50", "-25E-1", true}, {"0", "-0.0e7", true},
		{"100", "1e2", true}, {"1e400", "10e399", true}, {"1e400", "2e400", false},
		{"9007199254740993", "9007199254740992", false}, {"0.1", "0.10000000000000000001", false},
		{"1", "-1", false}, {"12", "1.2e1", true}, {"120", "12", false},
	} {
		if got := Equal(json.Number(c.a), json.Number(c.b)); got != c.eq {
			t.Errorf("Equal(%s, %s) = %v", c.a, c.b, got)
		}
		ka, kb := string(appendKey(nil, json.Number(c.a))), string(appendKey(nil, json.Number(c.b)))
		if (ka == kb) != c.eq {
			t.Errorf("keys of %s and %s: %q %q, equal %v", c.a, c.b, ka, kb, c.eq)
		}
	}
	if !Equal(float64(1.5), json.Number("15e-1")) || Equal("1", json.Number("1")) {
		t.Error("a float64 and its text, or a string and a number")
	}
}

// TestUniqueItemsIsLinear: uniqueItems over a long array of distinct items finishes (every
// pair compared would be 10^10 comparisons) and still finds a repeat at the end, whatever the
// spelling of its numbers or the order of its keys.
func TestUniqueItemsIsLinear(t *testing.T) {
	const n = 150000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d,", i)
	}
	distinct := b.String()
	if err := check(t, `{"uniqueItems":true}`, "["+distinct[:len(distinct)-1]+"]"); err != nil {
		t.Fatalf("%d distinct numbers: %v", n, err)
	}
	err := check(t, `{"uniqueItems":true}`, "["+distinct+"7.0e0]")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("items 7 and %d are equal", n)) {
		t.Fatalf("7 repeated as 7.0e0 at the end: %v", err)
	}
	if err := check(t, `{"uniqueItems":true}`, `[{"a":1,"b":["x",null]},{"b":["x",null],"a":1.0}]`); err == nil {
		t.Error("two equal objects with their keys in another order and 1 as 1.0 passed uniqueItems")
	}
	if err := check(t, `{"uniqueItems":true}`, `["1",1,true,"true",null,"null",[],{},[[]],[{}]]`); err != nil {
		t.Errorf("values of different types that print alike: %v", err)
	}
}
