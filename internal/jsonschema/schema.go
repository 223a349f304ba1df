package jsonschema

import "reflect"

// Schema is one JSON Schema (or subschema). The empty Schema is the schema true; a Schema
// whose only keyword is Not, the empty schema, is false. A Schema is not changed by [Resolve]
// or validation, so one parsed schema may serve many validations.
type Schema struct {
	ID            string             // $id
	Schema        string             // $schema
	Ref           string             // $ref
	DynamicRef    string             // $dynamicRef, resolved as a plain $ref
	Anchor        string             // $anchor
	DynamicAnchor string             // $dynamicAnchor, an anchor
	Comment       string             // $comment
	Defs          map[string]*Schema // $defs
	Definitions   map[string]*Schema // definitions (draft-07)

	Title       string
	Description string
	Default     []byte // the default value's JSON text, kept as written
	Format      string // an annotation only

	// Type is a single type name; Types is the array form. At most one is set.
	Type  string
	Types []string
	Enum  []any
	// Const is the value the instance must equal; a pointer, so that const null is possible.
	Const *any

	MultipleOf       *float64
	Minimum          *float64
	Maximum          *float64
	ExclusiveMinimum *float64
	ExclusiveMaximum *float64

	MinLength *int
	MaxLength *int
	Pattern   string

	// PrefixItems (2020-12) or ItemsArray (draft-07 "items" as an array) describe the first
	// items; Items the rest (2020-12) or, without either, every item; AdditionalItems the items
	// after ItemsArray.
	PrefixItems      []*Schema
	Items            *Schema
	ItemsArray       []*Schema
	AdditionalItems  *Schema
	MinItems         *int
	MaxItems         *int
	UniqueItems      bool
	Contains         *Schema
	MinContains      *int
	MaxContains      *int
	UnevaluatedItems *Schema

	MinProperties         *int
	MaxProperties         *int
	Required              []string
	DependentRequired     map[string][]string
	DependentSchemas      map[string]*Schema
	Properties            map[string]*Schema
	PatternProperties     map[string]*Schema
	AdditionalProperties  *Schema
	PropertyNames         *Schema
	UnevaluatedProperties *Schema
	// DependencySchemas and DependencyStrings are draft-07 "dependencies", split by form.
	DependencySchemas map[string]*Schema
	DependencyStrings map[string][]string

	AllOf []*Schema
	AnyOf []*Schema
	OneOf []*Schema
	Not   *Schema
	If    *Schema
	Then  *Schema
	Else  *Schema

	// Extra holds the keywords this package does not know, as decoded (numbers as
	// json.Number); they are written back out after the known ones, sorted.
	Extra map[string]any

	// PropertyOrder, when set, is the order Properties are written in (inference sets it to
	// the struct's field order); otherwise they are written sorted. It is not a keyword.
	PropertyOrder []string
}

// True is the schema that accepts every value.
func True() *Schema { return &Schema{} }

// False is the schema that accepts no value.
func False() *Schema { return &Schema{Not: &Schema{}} }

// Ptr returns a pointer to v, for the optional numeric keywords.
func Ptr[T any](v T) *T { return &v }

// IsTrue reports whether s is the schema true (no keyword at all).
func IsTrue(s *Schema) bool { return s != nil && reflect.ValueOf(s).Elem().IsZero() }

// IsFalse reports whether s is the schema false ({"not":{}} and nothing else).
func IsFalse(s *Schema) bool {
	if s == nil || !IsTrue(s.Not) {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(&c).Elem().IsZero()
}
