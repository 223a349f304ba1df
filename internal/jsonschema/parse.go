package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// UnmarshalJSON reads a schema: an object or a boolean. Unknown keywords go to Extra; a known
// keyword of the wrong type is an error naming it.
func (s *Schema) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if d.More() {
		return fmt.Errorf("schema: data after the schema")
	}
	p, err := fromValue(v, "#")
	if err != nil {
		return err
	}
	*s = *p
	return nil
}

// Parse reads schema JSON; it is [Schema.UnmarshalJSON] returning the schema.
func Parse(data []byte) (*Schema, error) {
	var s Schema
	if err := s.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return &s, nil
}

type keywordError struct {
	at, keyword, want string
	got               any
}

func (e *keywordError) Error() string {
	return fmt.Sprintf("schema at %s: %q must be %s, not %s", e.at, e.keyword, e.want, Kind(e.got))
}

// Kind names the JSON type of a decoded value with its article, for messages: "null", "a
// boolean", "a string", "a number", "an array", "an object".
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// fromValue builds the schema decoded as v; at is its JSON pointer, for errors.
func fromValue(v any, at string) (*Schema, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return True(), nil
		}
		return False(), nil
	case map[string]any:
		s := &Schema{}
		var draft4Min, draft4Max bool
		for k, val := range v {
			p := parser{s: s, at: at, key: k, val: val}
			switch k {
			case "exclusiveMinimum", "exclusiveMaximum":
				if b, ok := val.(bool); ok {
					if k == "exclusiveMinimum" {
						draft4Min = b
					} else {
						draft4Max = b
					}
					continue
				}
			}
			if err := p.keyword(); err != nil {
				return nil, err
			}
		}
		// Draft-04: a boolean exclusive bound makes minimum/maximum exclusive.
		if draft4Min && s.Minimum != nil {
			s.ExclusiveMinimum, s.Minimum = s.Minimum, nil
		}
		if draft4Max && s.Maximum != nil {
			s.ExclusiveMaximum, s.Maximum = s.Maximum, nil
		}
		return s, nil
	}
	return nil, fmt.Errorf("schema at %s: a schema is an object or a boolean, not %s", at, Kind(v))
}

// parser reads one keyword of s.
type parser struct {
	s       *Schema
	at, key string
	val     any
}

func (p *parser) fail(want string) error {
	return &keywordError{at: p.at, keyword: p.key, want: want, got: p.val}
}

func (p *parser) sub() string { return p.at + "/" + escapePointer(p.key) }

func (p *parser) keyword() error {
	s := p.s
	var err error
	switch p.key {
	case "$id":
		s.ID, err = p.str()
	case "$schema":
		s.Schema, err = p.str()
	case "$ref":
		s.Ref, err = p.str()
	case "$dynamicRef":
		s.DynamicRef, err = p.str()
	case "$anchor":
		s.Anchor, err = p.str()
	case "$dynamicAnchor":
		s.DynamicAnchor, err = p.str()
	case "$comment":
		s.Comment, err = p.str()
	case "$defs":
		s.Defs, err = p.schemaMap()
	case "definitions":
		s.Definitions, err = p.schemaMap()
	case "title":
		s.Title, err = p.str()
	case "description":
		s.Description, err = p.str()
	case "default":
		s.Default, err = json.Marshal(p.val)
	case "format":
		s.Format, err = p.str()
	case "type":
		err = p.types()
	case "enum":
		l, ok := p.val.([]any)
		if !ok {
			return p.fail("an array")
		}
		s.Enum = l
	case "const":
		c := p.val
		s.Const = &c
	case "multipleOf":
		s.MultipleOf, err = p.num()
		if err == nil && *s.MultipleOf <= 0 {
			return p.fail("a number above 0")
		}
	case "minimum":
		s.Minimum, err = p.num()
	case "maximum":
		s.Maximum, err = p.num()
	case "exclusiveMinimum":
		s.ExclusiveMinimum, err = p.num()
	case "exclusiveMaximum":
		s.ExclusiveMaximum, err = p.num()
	default:
		return p.keyword2()
	}
	return err
}

func (p *parser) keyword2() error {
	s := p.s
	var err error
	switch p.key {
	case "minLength":
		s.MinLength, err = p.count()
	case "maxLength":
		s.MaxLength, err = p.count()
	case "pattern":
		s.Pattern, err = p.str()
	case "prefixItems":
		s.PrefixItems, err = p.schemaList()
	case "items":
		if _, ok := p.val.([]any); ok {
			s.ItemsArray, err = p.schemaList()
		} else {
			s.Items, err = p.schema()
		}
	case "additionalItems":
		s.AdditionalItems, err = p.schema()
	case "minItems":
		s.MinItems, err = p.count()
	case "maxItems":
		s.MaxItems, err = p.count()
	case "uniqueItems":
		b, ok := p.val.(bool)
		if !ok {
			return p.fail("a boolean")
		}
		s.UniqueItems = b
	case "contains":
		s.Contains, err = p.schema()
	case "minContains":
		s.MinContains, err = p.count()
	case "maxContains":
		s.MaxContains, err = p.count()
	case "unevaluatedItems":
		s.UnevaluatedItems, err = p.schema()
	case "minProperties":
		s.MinProperties, err = p.count()
	case "maxProperties":
		s.MaxProperties, err = p.count()
	case "required":
		if _, draft3 := p.val.(bool); draft3 {
			// A property's own "required": true is draft 3's spelling; newer drafts give it no
			// meaning. It is kept as an unknown keyword (not checked) rather than making every
			// call of an older server's tool fail on its schema.
			return p.keyword3()
		}
		s.Required, err = p.strings()
	default:
		return p.keyword3()
	}
	return err
}

func (p *parser) keyword3() error {
	s := p.s
	var err error
	switch p.key {
	case "dependentRequired":
		s.DependentRequired, err = p.stringsMap()
	case "dependentSchemas":
		s.DependentSchemas, err = p.schemaMap()
	case "dependencies":
		err = p.dependencies()
	case "properties":
		s.Properties, err = p.schemaMap()
	case "patternProperties":
		s.PatternProperties, err = p.schemaMap()
	case "additionalProperties":
		s.AdditionalProperties, err = p.schema()
	case "propertyNames":
		s.PropertyNames, err = p.schema()
	case "unevaluatedProperties":
		s.UnevaluatedProperties, err = p.schema()
	case "allOf":
		s.AllOf, err = p.schemaList()
	case "anyOf":
		s.AnyOf, err = p.schemaList()
	case "oneOf":
		s.OneOf, err = p.schemaList()
	case "not":
		s.Not, err = p.schema()
	case "if":
		s.If, err = p.schema()
	case "then":
		s.Then, err = p.schema()
	case "else":
		s.Else, err = p.schema()
	default:
		if s.Extra == nil {
			s.Extra = map[string]any{}
		}
		s.Extra[p.key] = p.val
	}
	return err
}

func (p *parser) str() (string, error) {
	v, ok := p.val.(string)
	if !ok {
		return "", p.fail("a string")
	}
	return v, nil
}

func (p *parser) num() (*float64, error) {
	n, ok := p.val.(json.Number)
	if !ok {
		return nil, p.fail("a number")
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return nil, p.fail("a finite number")
	}
	return &f, nil
}

// count reads a non-negative integer (2.0 counts as 2, as the specification allows).
func (p *parser) count() (*int, error) {
	f, err := p.num()
	if err != nil || *f < 0 || *f != math.Trunc(*f) || *f > math.MaxInt32 {
		return nil, p.fail("a non-negative integer")
	}
	n := int(*f)
	return &n, nil
}

func (p *parser) types() error {
	switch v := p.val.(type) {
	case string:
		p.s.Type = v
		return nil
	case []any:
		l := make([]string, len(v))
		for i, e := range v {
			t, ok := e.(string)
			if !ok {
				return p.fail("a type name or an array of them")
			}
			l[i] = t
		}
		p.s.Types = l
		return nil
	}
	return p.fail("a type name or an array of them")
}

func (p *parser) strings() ([]string, error) {
	l, ok := p.val.([]any)
	if !ok {
		return nil, p.fail("an array of strings")
	}
	out := make([]string, len(l))
	for i, e := range l {
		if out[i], ok = e.(string); !ok {
			return nil, p.fail("an array of strings")
		}
	}
	return out, nil
}

func (p *parser) stringsMap() (map[string][]string, error) {
	m, ok := p.val.(map[string]any)
	if !ok {
		return nil, p.fail("an object of string arrays")
	}
	out := make(map[string][]string, len(m))
	for k, v := range m {
		q := parser{at: p.sub(), key: k, val: v}
		l, err := q.strings()
		if err != nil {
			return nil, err
		}
		out[k] = l
	}
	return out, nil
}

func (p *parser) schema() (*Schema, error) { return fromValue(p.val, p.sub()) }

func (p *parser) schemaList() ([]*Schema, error) {
	l, ok := p.val.([]any)
	if !ok {
		return nil, p.fail("an array of schemas")
	}
	out := make([]*Schema, len(l))
	for i, e := range l {
		s, err := fromValue(e, fmt.Sprintf("%s/%d", p.sub(), i))
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (p *parser) schemaMap() (map[string]*Schema, error) {
	m, ok := p.val.(map[string]any)
	if !ok {
		return nil, p.fail("an object of schemas")
	}
	out := make(map[string]*Schema, len(m))
	for k, v := range m {
		s, err := fromValue(v, p.sub()+"/"+escapePointer(k))
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// dependencies reads draft-07 "dependencies": each entry a list of property names or a schema.
func (p *parser) dependencies() error {
	m, ok := p.val.(map[string]any)
	if !ok {
		return p.fail("an object")
	}
	for k, v := range m {
		q := parser{at: p.sub(), key: k, val: v}
		if _, isList := v.([]any); isList {
			l, err := q.strings()
			if err != nil {
				return err
			}
			if p.s.DependencyStrings == nil {
				p.s.DependencyStrings = map[string][]string{}
			}
			p.s.DependencyStrings[k] = l
			continue
		}
		s, err := q.schema()
		if err != nil {
			return err
		}
		if p.s.DependencySchemas == nil {
			p.s.DependencySchemas = map[string]*Schema{}
		}
		p.s.DependencySchemas[k] = s
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
