package jsonschema

import (
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/internal/strictjson"
)

// FuzzSchema checks that no schema text and instance make parsing, writing, resolving or
// validating panic, and that a written schema reads back to the same text.
func FuzzSchema(f *testing.F) {
	for _, c := range keywordCases {
		for _, v := range c.valid {
			f.Add(c.schema, v)
		}
	}
	f.Add(fsServer, `{"path":"a","edits":[]}`)
	f.Add(draft07Server, `{"repo":"o/r","issue":{}}`)
	f.Add(treeSchema, `{"root":{"name":"a","children":[{}]}}`)
	f.Fuzz(func(t *testing.T, schema, instance string) {
		s, err := Parse([]byte(schema))
		if err != nil {
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("write %s: %v", schema, err)
		}
		again, err := Parse(b)
		if err != nil {
			t.Fatalf("%s written as %s, which does not parse: %v", schema, b, err)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("%s written as %s, then as %s", schema, b, b2)
		}
		r, err := Resolve(s)
		if err != nil {
			return
		}
		v, err := strictjson.Decode(instance)
		if err != nil {
			return
		}
		_ = r.Validate(v)
	})
}
