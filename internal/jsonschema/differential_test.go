package jsonschema

import (
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/internal/strictjson"

	other "github.com/google/jsonschema-go/jsonschema"
)

// floats is v with its numbers as float64, the form the reference implementation validates.
func floats(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case []any:
		o := make([]any, len(v))
		for i, e := range v {
			o[i] = floats(e)
		}
		return o
	case map[string]any:
		o := map[string]any{}
		for k, e := range v {
			o[k] = floats(e)
		}
		return o
	}
	return v
}

// TestAgreesWithTheReference runs every keyword case's schema, with every instance of every
// case, through rein's validator and the reference implementation the MCP SDK uses (a test
// dependency only): they must agree on accepting or refusing, except where rein reads what
// the reference does not (draft-07 tuple items and dependencies, draft-04 boolean exclusive
// bounds, patterns Go cannot compile) or is exact where the reference uses float64.
func TestAgreesWithTheReference(t *testing.T) {
	known := map[string]bool{
		"draft-07 items array": true, "draft-07 items array, no additionalItems": true, "draft-07 dependencies": true, "draft-04 excl": true,
		"pattern Go cannot compile is skipped": true, "patternProperties Go cannot compile opens the object": true,
		"multipleOf": true, // 0.07 is a multiple of 0.01; 0.07/0.01 in float64 is not whole
	}
	var instances []string
	for _, c := range keywordCases {
		instances = append(instances, c.valid...)
		for k := range c.invalid {
			instances = append(instances, k)
		}
	}
	instances = append(instances, `{}`, `[]`, `""`, `0`, `null`, `{"a":1}`, `{"a":"x","b":[1,2]}`, `[1,1]`, `[1,"a",null]`)
	compared := 0
	for name, c := range keywordCases {
		if known[name] {
			continue
		}
		var ref other.Schema
		if err := json.Unmarshal([]byte(c.schema), &ref); err != nil {
			t.Errorf("%s: the reference cannot read %s: %v", name, c.schema, err)
			continue
		}
		refResolved, err := ref.Resolve(nil)
		if err != nil {
			t.Errorf("%s: the reference cannot resolve %s: %v", name, c.schema, err)
			continue
		}
		for _, in := range instances {
			v, err := strictjson.Decode(in)
			if err != nil {
				t.Fatalf("instance %s: %v", in, err)
			}
			ours, theirs := check(t, c.schema, in), refResolved.Validate(floats(v))
			if (ours == nil) != (theirs == nil) {
				t.Errorf("%s: schema %s, instance %s: rein %v, the reference %v", name, c.schema, in, ours, theirs)
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Errorf("only %d comparisons", compared)
	}
}
