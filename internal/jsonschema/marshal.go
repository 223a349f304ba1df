package jsonschema

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/reinhq/rein/internal/jsonenc"
)

// MarshalJSON writes s with its keywords in a fixed order ("type", "properties", "items"
// first, then the rest; unknown keywords last, sorted). The schema true is written as true and
// false as false.
func (s *Schema) MarshalJSON() ([]byte, error) {
	var w writer
	w.schema(s)
	if w.err != nil {
		return nil, w.err
	}
	return w.buf.Bytes(), nil
}

type writer struct {
	buf   bytes.Buffer
	err   error
	first bool
}

func (w *writer) value(v any) {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.buf.Write(b)
}

// string writes a JSON string, as json.Marshal writes it.
func (w *writer) string(v string) { w.buf.Write(jsonenc.String(w.buf.AvailableBuffer(), v)) }

func (w *writer) key(k string) {
	if !w.first {
		w.buf.WriteByte(',')
	}
	w.first = false
	w.string(k)
	w.buf.WriteByte(':')
}

func (w *writer) schema(s *Schema) {
	switch {
	case s == nil || IsTrue(s):
		w.buf.WriteString("true")
		return
	case IsFalse(s):
		w.buf.WriteString("false")
		return
	}
	w.buf.WriteByte('{')
	w.first = true
	switch {
	case s.Type != "":
		w.key("type")
		w.string(s.Type)
	case s.Types != nil:
		w.key("type")
		w.value(s.Types)
	}
	w.schemaMap("properties", s.Properties, s.PropertyOrder)
	if s.DependencySchemas != nil || s.DependencyStrings != nil {
		w.key("dependencies")
		w.dependencies(s)
	}
	if s.ItemsArray != nil {
		w.schemaList("items", s.ItemsArray)
	} else if s.Items != nil {
		w.key("items")
		w.schema(s.Items)
	}
	w.meta(s)
	w.assertions(s)
	w.applicators(s)
	if s.Format != "" {
		w.key("format")
		w.string(s.Format)
	}
	extra := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		extra = append(extra, k)
	}
	slices.Sort(extra)
	for _, k := range extra {
		w.key(k)
		w.value(s.Extra[k])
	}
	w.buf.WriteByte('}')
	w.first = false
}

func (w *writer) str(k, v string) {
	if v != "" {
		w.key(k)
		w.string(v)
	}
}

func (w *writer) meta(s *Schema) {
	w.str("$id", s.ID)
	w.str("$schema", s.Schema)
	w.str("$ref", s.Ref)
	w.str("$comment", s.Comment)
	w.schemaMap("$defs", s.Defs, nil)
	w.schemaMap("definitions", s.Definitions, nil)
	w.str("$anchor", s.Anchor)
	w.str("$dynamicAnchor", s.DynamicAnchor)
	w.str("$dynamicRef", s.DynamicRef)
	w.str("title", s.Title)
	w.str("description", s.Description)
	if s.Default != nil {
		w.key("default")
		w.buf.Write(s.Default)
	}
}

func (w *writer) number(k string, v *float64) {
	if v != nil {
		w.key(k)
		b, err := jsonenc.Float(w.buf.AvailableBuffer(), *v)
		if err != nil && w.err == nil {
			w.err = err
		}
		w.buf.Write(b)
	}
}

func (w *writer) count(k string, v *int) {
	if v != nil {
		w.key(k)
		w.buf.Write(jsonenc.Int(w.buf.AvailableBuffer(), int64(*v)))
	}
}

func (w *writer) assertions(s *Schema) {
	if s.Enum != nil {
		w.key("enum")
		w.value(s.Enum)
	}
	if s.Const != nil {
		w.key("const")
		w.value(*s.Const)
	}
	w.number("multipleOf", s.MultipleOf)
	w.number("minimum", s.Minimum)
	w.number("maximum", s.Maximum)
	w.number("exclusiveMinimum", s.ExclusiveMinimum)
	w.number("exclusiveMaximum", s.ExclusiveMaximum)
	w.count("minLength", s.MinLength)
	w.count("maxLength", s.MaxLength)
	w.str("pattern", s.Pattern)
	w.schemaList("prefixItems", s.PrefixItems)
	w.count("minItems", s.MinItems)
	w.count("maxItems", s.MaxItems)
	w.sub("additionalItems", s.AdditionalItems)
	if s.UniqueItems {
		w.key("uniqueItems")
		w.buf.WriteString("true")
	}
	w.sub("contains", s.Contains)
	w.count("minContains", s.MinContains)
	w.count("maxContains", s.MaxContains)
	w.sub("unevaluatedItems", s.UnevaluatedItems)
	w.count("minProperties", s.MinProperties)
	w.count("maxProperties", s.MaxProperties)
	if s.Required != nil {
		w.key("required")
		w.value(s.Required)
	}
	if s.DependentRequired != nil {
		w.key("dependentRequired")
		w.value(s.DependentRequired)
	}
}

func (w *writer) applicators(s *Schema) {
	w.schemaMap("patternProperties", s.PatternProperties, nil)
	w.sub("additionalProperties", s.AdditionalProperties)
	w.sub("propertyNames", s.PropertyNames)
	w.sub("unevaluatedProperties", s.UnevaluatedProperties)
	w.schemaList("allOf", s.AllOf)
	w.schemaList("anyOf", s.AnyOf)
	w.schemaList("oneOf", s.OneOf)
	w.sub("not", s.Not)
	w.sub("if", s.If)
	w.sub("then", s.Then)
	w.sub("else", s.Else)
	w.schemaMap("dependentSchemas", s.DependentSchemas, nil)
}

func (w *writer) sub(k string, s *Schema) {
	if s != nil {
		w.key(k)
		w.schema(s)
	}
}

func (w *writer) schemaList(k string, l []*Schema) {
	if l == nil {
		return
	}
	w.key(k)
	w.buf.WriteByte('[')
	for i, s := range l {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.schema(s)
	}
	w.buf.WriteByte(']')
}

// schemaMap writes m in order (names not in order follow, sorted) or, without one, sorted.
func (w *writer) schemaMap(k string, m map[string]*Schema, order []string) {
	if m == nil {
		return
	}
	w.key(k)
	w.buf.WriteByte('{')
	first := true
	put := func(name string) {
		if !first {
			w.buf.WriteByte(',')
		}
		first = false
		w.string(name)
		w.buf.WriteByte(':')
		w.schema(m[name])
	}
	seen := map[string]bool{}
	for _, name := range order {
		if _, ok := m[name]; ok && !seen[name] {
			seen[name] = true
			put(name)
		}
	}
	rest := make([]string, 0, len(m))
	for name := range m {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	for _, name := range rest {
		put(name)
	}
	w.buf.WriteByte('}')
	w.first = false
}

func (w *writer) dependencies(s *Schema) {
	names := make([]string, 0, len(s.DependencySchemas)+len(s.DependencyStrings))
	for n := range s.DependencySchemas {
		names = append(names, n)
	}
	for n := range s.DependencyStrings {
		names = append(names, n)
	}
	slices.Sort(names)
	w.buf.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.string(n)
		w.buf.WriteByte(':')
		if l, ok := s.DependencyStrings[n]; ok {
			w.value(l)
		} else {
			w.schema(s.DependencySchemas[n])
		}
	}
	w.buf.WriteByte('}')
	w.first = false
}
