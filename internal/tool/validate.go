package tool

import (
	"github.com/reinhq/rein/internal/strictjson"

	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/jsonschema"
)

// ValidationError reports why a model's arguments were refused. Its message is written for
// the model: it names the tool, lists every problem found with the path of the offending
// value, and repeats the arguments received so that the model can correct its call.
type ValidationError struct {
	Tool string
	// Problems are "path: message" lines, e.g. "edits[0].oldText: missing required property".
	// The path of the arguments object itself is "(root)".
	Problems []string
	// Received is the argument text as the model sent it.
	Received string
}

// maxReceivedInError caps how much of the received arguments an error message repeats.
const maxReceivedInError = 4096

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Validation failed for tool %q:\n", e.Tool)
	for _, p := range e.Problems {
		b.WriteString("  - ")
		b.WriteString(p)
		b.WriteByte('\n')
	}
	b.WriteString("\nReceived arguments:\n")
	recv := e.Received
	if len(recv) > maxReceivedInError {
		cut := maxReceivedInError
		for cut > 0 && !utf8.RuneStart(recv[cut]) {
			cut--
		}
		recv = fmt.Sprintf("%s\n... [%d more bytes not shown]", recv[:cut], len(recv)-cut)
	}
	b.WriteString(strings.ToValidUTF8(recv, "\uFFFD"))
	return b.String()
}

// Preparer is an optional interface for a [Tool] that accepts argument shapes its schema does
// not describe (older field names, a nested value sent as a JSON string). [ValidateCall]
// calls PrepareArgs after the syntax checks (one object, valid UTF-8, no duplicate keys) and
// before schema validation. args is the decoded object: nested objects are map[string]any,
// arrays []any and numbers [json.Number]. PrepareArgs may rewrite it in place and reports
// whether it did; an error is reported to the model as a validation problem.
type Preparer interface {
	PrepareArgs(args map[string]any) (changed bool, err error)
}

// RefusalObserver is implemented by a tool that must know of its calls refused before it ran
// (arguments that failed [ValidateCall]): the kernel passes it the raw arguments, and the call
// still gets the validation error as its result. A closed contract's tool counts such a
// submission as a refused one, with its own problem codes.
type RefusalObserver interface {
	ArgsRefused(raw string)
}

// Validate checks raw, the argument text a model produced for the tool described by spec, and
// returns the arguments object. The checks are strict, in this order:
//   - raw is exactly one JSON object (surrounding whitespace allowed, nothing after it);
//     blank text counts as the empty object "{}", since providers send it for calls without
//     arguments;
//   - raw is valid UTF-8 and no object, at any depth, repeats a key;
//   - every key is declared by the schema: a key that matches a property only when case is
//     ignored is reported with the expected spelling; unknown keys are refused wherever the
//     schema lists properties, unless additionalProperties allows them;
//   - the value satisfies the JSON Schema in spec.Schema (type, required, enum, const,
//     minimum/maximum, length and item bounds, items, properties), then the full schema as
//     checked by package jsonschema (draft 2020-12 and draft-07). An "integer" must be written without a
//     fraction or exponent (2, not 2.0), since arguments are decoded into Go integers.
//
// A refusal is a *[ValidationError] listing every problem found. An error of any other type
// means spec.Schema itself is unusable. An empty spec.Schema accepts any object.
func Validate(spec Spec, raw string) (json.RawMessage, error) {
	return validate(spec, raw, nil)
}

// ValidateCall is [Validate] for t's spec, running t's [Preparer] hook when it has one.
func ValidateCall(t Tool, raw string) (json.RawMessage, error) {
	p, _ := t.(Preparer)
	return validate(t.Spec(), raw, p)
}

func validate(spec Spec, raw string, prep Preparer) (json.RawMessage, error) {
	c, err := compile(spec.Schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q has an invalid schema: %w", spec.Name, err)
	}
	fail := func(problems ...string) error {
		return &ValidationError{Tool: spec.Name, Problems: problems, Received: raw}
	}
	text := strings.TrimSpace(raw)
	if text == "" {
		text = "{}"
	}
	if !utf8.ValidString(text) {
		off := 0
		for off < len(text) {
			r, n := utf8.DecodeRuneInString(text[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, fail(fmt.Sprintf("(root): arguments are not valid UTF-8 (first bad byte at offset %d)", off))
	}
	v, err := strictjson.Decode(text)
	if err != nil {
		return nil, fail(err.Error())
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fail(fmt.Sprintf("(root): arguments must be a JSON object, got %s", describe(v)))
	}
	out := json.RawMessage(text)
	if prep != nil {
		changed, err := prep.PrepareArgs(obj)
		if err != nil {
			return nil, fail("(root): " + err.Error())
		}
		if changed {
			b, err := json.Marshal(obj)
			if err != nil {
				return nil, fail("(root): " + err.Error())
			}
			out = b
		}
	}
	if c.resolved == nil {
		return out, nil
	}
	w := walker{c: c}
	w.check("", obj, c.resolved.Root())
	if len(w.problems) > 0 {
		return nil, fail(w.problems...)
	}
	if err := c.resolved.Validate(obj); err != nil {
		var ve *jsonschema.Error
		if !errors.As(err, &ve) {
			return nil, fail("(root): " + err.Error())
		}
		problems := make([]string, len(ve.Problems))
		for i, p := range ve.Problems {
			problems[i] = p.String()
		}
		return nil, fail(problems...)
	}
	return out, nil
}

// compiled is a parsed and resolved schema, cached by its text; nil resolved: an empty schema,
// which accepts any object.
type compiled struct {
	resolved *jsonschema.Resolved
}

func (c *compiled) isTrue(s *jsonschema.Schema) bool  { return s != nil && c.resolved.IsTrue(s) }
func (c *compiled) isFalse(s *jsonschema.Schema) bool { return s != nil && c.resolved.IsFalse(s) }

var (
	compileMu    sync.Mutex
	compileCache = map[string]*compiled{}
)

// compileCacheMax bounds the cache; tool schemas are few, so it is simply emptied when full.
const compileCacheMax = 512

func compile(schema json.RawMessage) (*compiled, error) {
	if len(strings.TrimSpace(string(schema))) == 0 {
		return &compiled{}, nil
	}
	compileMu.Lock()
	c, ok := compileCache[string(schema)]
	compileMu.Unlock()
	if ok {
		return c, nil
	}
	s, err := jsonschema.Parse(schema)
	if err != nil {
		return nil, err
	}
	rs, err := jsonschema.Resolve(s)
	if err != nil {
		return nil, err
	}
	c = &compiled{resolved: rs}
	compileMu.Lock()
	if len(compileCache) >= compileCacheMax {
		clear(compileCache)
	}
	compileCache[string(schema)] = c
	compileMu.Unlock()
	return c, nil
}

// walker checks a decoded value against the common schema keywords, collecting problems
// with readable paths. Keywords it does not know are left to package jsonschema.
type walker struct {
	c        *compiled
	problems []string
}

func (w *walker) add(path, format string, args ...any) {
	w.problems = append(w.problems, strictjson.ShowPath(path)+": "+fmt.Sprintf(format, args...))
}

func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		// An integer must be written as one: arguments are decoded into Go integers, which
		// refuse 2.0 and 1e3.
		if !strings.ContainsAny(string(v), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// describe renders a value briefly for a problem message: its type and, for scalars, the value.
func describe(v any) string {
	t := jsonTypeOf(v)
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			cut := 40
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			return fmt.Sprintf("string %q...", v[:cut])
		}
		return fmt.Sprintf("string %q", v)
	case json.Number, bool:
		return fmt.Sprintf("%s %v", t, v)
	}
	return t
}

func (w *walker) check(path string, v any, s *jsonschema.Schema) {
	if s == nil || w.c.isTrue(s) {
		return
	}
	if w.c.isFalse(s) {
		w.add(path, "no value is allowed here")
		return
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	got := jsonTypeOf(v)
	if len(types) > 0 && !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
		w.add(path, "expected %s, got %s", strings.Join(types, " or "), describe(v))
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonschema.Equal(v, e) }) {
		opts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			b, _ := json.Marshal(e)
			opts[i] = string(b)
		}
		w.add(path, "must be one of %s; got %s", strings.Join(opts, ", "), describe(v))
	}
	if s.Const != nil && !jsonschema.Equal(v, *s.Const) {
		b, _ := json.Marshal(*s.Const)
		w.add(path, "must be %s; got %s", b, describe(v))
	}
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		if s.Minimum != nil && f < *s.Minimum {
			w.add(path, "must be >= %v; got %v", *s.Minimum, v)
		}
		if s.Maximum != nil && f > *s.Maximum {
			w.add(path, "must be <= %v; got %v", *s.Maximum, v)
		}
		if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
			w.add(path, "must be > %v; got %v", *s.ExclusiveMinimum, v)
		}
		if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
			w.add(path, "must be < %v; got %v", *s.ExclusiveMaximum, v)
		}
	case string:
		n := utf8.RuneCountInString(v)
		if s.MinLength != nil && n < *s.MinLength {
			w.add(path, "must be at least %d characters long; got %d", *s.MinLength, n)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			w.add(path, "must be at most %d characters long; got %d", *s.MaxLength, n)
		}
	case []any:
		if s.MinItems != nil && len(v) < *s.MinItems {
			w.add(path, "must have at least %d items; got %d", *s.MinItems, len(v))
		}
		if s.MaxItems != nil && len(v) > *s.MaxItems {
			w.add(path, "must have at most %d items; got %d", *s.MaxItems, len(v))
		}
		for i, item := range v {
			is := s.Items
			if i < len(s.PrefixItems) {
				is = s.PrefixItems[i]
			} else if i < len(s.ItemsArray) {
				is = s.ItemsArray[i]
			}
			w.check(fmt.Sprintf("%s[%d]", path, i), item, is)
		}
	case map[string]any:
		w.checkObject(path, v, s)
	}
}

func (w *walker) checkObject(path string, obj map[string]any, s *jsonschema.Schema) {
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			w.add(strictjson.KeyPath(path, name), "missing required property")
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Unknown keys are refused when the schema lists properties and neither
	// additionalProperties nor patternProperties opens the object up.
	strict := len(s.Properties) > 0 && len(s.PatternProperties) == 0 &&
		(s.AdditionalProperties == nil || w.c.isFalse(s.AdditionalProperties))
	if w.c.isFalse(s.AdditionalProperties) && len(s.PatternProperties) == 0 {
		strict = true
	}
	for _, k := range keys {
		val := obj[k]
		if ps, ok := s.Properties[k]; ok {
			w.check(strictjson.KeyPath(path, k), val, ps)
			continue
		}
		if len(s.PatternProperties) > 0 {
			continue // left to package jsonschema
		}
		if !strict {
			w.check(strictjson.KeyPath(path, k), val, s.AdditionalProperties)
			continue
		}
		if want := caseMatch(s, k); want != "" {
			w.add(strictjson.KeyPath(path, k), "unknown property; did you mean %q? (property names are case-sensitive)", want)
			continue
		}
		if len(s.Properties) == 0 {
			w.add(strictjson.KeyPath(path, k), "unknown property (this object takes no properties)")
			continue
		}
		w.add(strictjson.KeyPath(path, k), "unknown property (expected one of: %s)", strings.Join(propertyNames(s), ", "))
	}
}

func caseMatch(s *jsonschema.Schema, key string) string {
	for _, name := range propertyNames(s) {
		if strings.EqualFold(name, key) {
			return name
		}
	}
	return ""
}

// propertyNames lists a schema's properties, sorted.
func propertyNames(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
