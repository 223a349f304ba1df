package tool

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/reinhq/rein/internal/jsonschema"
)

// SchemaFor builds the argument schema for a tool from the Go struct type T with
// [jsonschema.For]: property names come from json tags, descriptions from `jsonschema:"..."`
// tags, fields without omitempty/omitzero are required. Every object schema in the result gets
// additionalProperties false, and a required property does not accept null (jsonschema.For
// allows null for slices, maps and pointers; optional pointer fields keep allowing it, so a
// model may send null for "not given"). Each adjust function then runs on the schema, for what tags
// cannot say (enums, minimums).
func SchemaFor[T any](adjust ...func(*jsonschema.Schema)) (json.RawMessage, error) {
	s, err := jsonschema.For[T]()
	if err != nil {
		return nil, err
	}
	closeObjects(s)
	for _, f := range adjust {
		f(s)
	}
	if _, err := jsonschema.Resolve(s); err != nil {
		return nil, fmt.Errorf("schema for %T: %w", *new(T), err)
	}
	return json.Marshal(s)
}

// MustSchemaFor is [SchemaFor] for built-in tools, whose types are fixed: it panics on error.
func MustSchemaFor[T any](adjust ...func(*jsonschema.Schema)) json.RawMessage {
	b, err := SchemaFor[T](adjust...)
	if err != nil {
		panic(err)
	}
	return b
}

// closeObjects sets additionalProperties false on every schema that declares properties.
func closeObjects(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" || len(s.Properties) > 0 {
		if s.AdditionalProperties == nil || jsonschema.IsTrue(s.AdditionalProperties) {
			if len(s.Properties) > 0 || s.AdditionalProperties == nil {
				s.AdditionalProperties = jsonschema.False()
			}
		}
	}
	for name, p := range s.Properties {
		if p != nil && slices.Contains(s.Required, name) && len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
		closeObjects(p)
	}
	closeObjects(s.Items)
	for _, p := range s.PrefixItems {
		closeObjects(p)
	}
}
