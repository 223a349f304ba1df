package fstool

import (
	"testing"

	"github.com/reinhq/rein/internal/jsonschema"

	"github.com/reinhq/rein/internal/tool"
)

// TestSchemasMatchArgs checks each tool's written-out schema against the one tool.SchemaFor
// builds from its argument type (with what tags cannot say: minimums, minItems), byte for
// byte, so that the schema the model sees and the type its arguments decode into cannot drift.
func TestSchemasMatchArgs(t *testing.T) {
	for _, c := range []struct {
		name, got string
		want      []byte
	}{
		{"edit", editSchema, tool.MustSchemaFor[editArgs](func(s *jsonschema.Schema) {
			s.Properties["edits"].MinItems = jsonschema.Ptr(1)
		})},
		{"find", findSchema, tool.MustSchemaFor[findArgs](func(s *jsonschema.Schema) {
			s.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
			s.Properties["pattern"].MinLength = jsonschema.Ptr(1)
		})},
		{"ls", lsSchema, tool.MustSchemaFor[lsArgs](func(s *jsonschema.Schema) {
			s.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
		})},
		{"read", readSchema, tool.MustSchemaFor[readArgs](func(s *jsonschema.Schema) {
			s.Properties["offset"].Minimum = jsonschema.Ptr(1.0)
			s.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
		})},
		{"write", writeSchema, tool.MustSchemaFor[writeArgs]()},
	} {
		if c.got != string(c.want) {
			t.Errorf("%sSchema is not the schema of %sArgs; write it as\n%s", c.name, c.name, c.want)
		}
	}
}
