package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/jsonschema"
)

// Brief returns t described briefly: its [Spec.Brief] as the description and its schema
// without descriptions, so that it costs an agent's requests a fraction of the full
// description. What the schema checks (types, bounds, required and unknown keys) is unchanged,
// and so is what the tool does. A tool without a Brief, or whose schema cannot be read, is
// returned as it is.
func Brief(t Tool) Tool {
	spec := t.Spec()
	if spec.Brief == "" {
		return t
	}
	schema, err := withoutDescriptions(spec.Schema)
	if err != nil {
		return t
	}
	spec.Description, spec.Schema = spec.Brief, schema
	return &brief{Tool: t, spec: spec}
}

// brief is a tool with a brief spec; it runs and prepares arguments as the tool it wraps.
type brief struct {
	Tool
	spec Spec
}

func (b *brief) Spec() Spec { return b.spec }

func (b *brief) Run(ctx context.Context, call Call) (Result, error) { return b.Tool.Run(ctx, call) }

// PrepareArgs implements [Preparer] for a wrapped tool that does.
func (b *brief) PrepareArgs(args map[string]any) (bool, error) {
	if p, ok := b.Tool.(Preparer); ok {
		return p.PrepareArgs(args)
	}
	return false, nil
}

// withoutDescriptions returns schema with every description removed (a property that is
// itself named "description" stays).
func withoutDescriptions(schema json.RawMessage) (json.RawMessage, error) {
	if len(schema) == 0 {
		return schema, nil
	}
	s, err := jsonschema.Parse(schema)
	if err != nil {
		return nil, fmt.Errorf("brief schema: %w", err)
	}
	dropDescriptions(s)
	return json.Marshal(s)
}

func dropDescriptions(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Description = ""
	for _, p := range s.Properties {
		dropDescriptions(p)
	}
	dropDescriptions(s.Items)
	for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.OneOf, s.AllOf} {
		for _, p := range l {
			dropDescriptions(p)
		}
	}
	dropDescriptions(s.AdditionalProperties)
}
