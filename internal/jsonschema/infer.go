package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/reinhq/rein/internal/strictjson"
)

// For infers the schema of the Go type T, as encoding/json would write its values:
//   - bool is "boolean", signed and unsigned integers "integer" (sized ones bounded by their
//     range, unsigned ones by minimum 0), floats "number", strings (and time.Time) "string";
//   - a pointer accepts null as well as its element's schema; slices accept null and are
//     "array" with the element's schema as items; a Go array is an "array" of exactly its
//     length; a map with string keys accepts null and is an "object" whose
//     additionalProperties is the value's schema; an interface is the schema true;
//   - a struct is an "object" whose properties are its exported fields under their json
//     names (fields tagged json:"-" left out, embedded structs' fields promoted), in field
//     order; a field's `jsonschema:"..."` tag is its description; fields without omitempty or
//     omitzero are required; additionalProperties is false.
//
// A recursive type, a map with non-string keys, a channel, a function or a complex number is
// an error.
func For[T any]() (*Schema, error) { return ForType(reflect.TypeFor[T]()) }

// ForType is [For] for a reflect.Type.
func ForType(t reflect.Type) (*Schema, error) {
	return (&inferrer{active: map[reflect.Type]bool{}}).of(t)
}

type inferrer struct{ active map[reflect.Type]bool }

// integerSpan is the range of a sized integer kind.
func integerSpan(k reflect.Kind) (lo, hi float64) {
	switch k {
	case reflect.Int8:
		return math.MinInt8, math.MaxInt8
	case reflect.Int16:
		return math.MinInt16, math.MaxInt16
	case reflect.Int32:
		return math.MinInt32, math.MaxInt32
	case reflect.Uint8:
		return 0, math.MaxUint8
	case reflect.Uint16:
		return 0, math.MaxUint16
	}
	return 0, math.MaxUint32
}

func (in *inferrer) of(t reflect.Type) (*Schema, error) {
	switch t {
	case reflect.TypeFor[time.Time]():
		return &Schema{Type: "string"}, nil
	case reflect.TypeFor[json.RawMessage]():
		return True(), nil
	}
	s := &Schema{}
	switch k := t.Kind(); k {
	case reflect.Bool:
		s.Type = "boolean"
	case reflect.Int, reflect.Int64:
		s.Type = "integer"
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		s.Type, s.Minimum = "integer", Ptr(0.0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		lo, hi := integerSpan(k)
		s.Type, s.Minimum, s.Maximum = "integer", Ptr(lo), Ptr(hi)
	case reflect.Float32, reflect.Float64:
		s.Type = "number"
	case reflect.String:
		s.Type = "string"
	case reflect.Interface:
	case reflect.Pointer:
		return in.nullable(t.Elem())
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("jsonschema: %v: a map's keys must be strings", t)
		}
		s.Types = []string{"null", "object"}
		return s, in.into(&s.AdditionalProperties, t, t.Elem())
	case reflect.Slice:
		s.Types = []string{"null", "array"}
		return s, in.into(&s.Items, t, t.Elem())
	case reflect.Array:
		s.Type, s.MinItems, s.MaxItems = "array", Ptr(t.Len()), Ptr(t.Len())
		return s, in.into(&s.Items, t, t.Elem())
	case reflect.Struct:
		return in.object(t)
	default:
		return nil, fmt.Errorf("jsonschema: %v: no JSON Schema for a %s", t, k)
	}
	return s, nil
}

// nullable is the schema of a pointer to t: t's, with null allowed.
func (in *inferrer) nullable(t reflect.Type) (*Schema, error) {
	s, err := in.of(t)
	if err != nil || IsTrue(s) {
		return s, err
	}
	switch {
	case s.Type != "":
		s.Types, s.Type = []string{"null", s.Type}, ""
	case s.Types != nil && s.Types[0] != "null":
		s.Types = append([]string{"null"}, s.Types...)
	}
	return s, nil
}

// into sets *dst to the schema of elem, a part of t, refusing a cycle through t.
func (in *inferrer) into(dst **Schema, t, elem reflect.Type) error {
	if in.active[t] {
		return fmt.Errorf("jsonschema: %v refers to itself; a recursive type has no inferred schema", t)
	}
	in.active[t] = true
	defer delete(in.active, t)
	s, err := in.of(elem)
	*dst = s
	return err
}

func (in *inferrer) object(t reflect.Type) (*Schema, error) {
	if in.active[t] {
		return nil, fmt.Errorf("jsonschema: %v refers to itself; a recursive type has no inferred schema", t)
	}
	in.active[t] = true
	defer delete(in.active, t)
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: False()}
	if err := in.fields(s, t); err != nil {
		return nil, err
	}
	return s, nil
}

func (in *inferrer) fields(s *Schema, t reflect.Type) error {
	for _, f := range strictjson.Fields(t) {
		name := f.Name
		p, err := in.of(f.Type)
		if err != nil {
			return fmt.Errorf("%v.%s: %w", t, f.StructField.Name, err)
		}
		if d := f.Tag.Get("jsonschema"); d != "" {
			if IsTrue(p) {
				p = &Schema{}
			}
			p.Description = d
		}
		s.PropertyOrder = append(s.PropertyOrder, name)
		s.Properties[name] = p
		if !f.HasOption("omitempty") && !f.HasOption("omitzero") {
			s.Required = append(s.Required, name)
		}
	}
	return nil
}
