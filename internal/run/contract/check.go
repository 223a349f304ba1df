package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/jsonschema"

	"github.com/reinhq/rein/internal/secret"
	"github.com/reinhq/rein/internal/strictjson"
)

// MaxItems is the most items any list of a contract may hold.
const MaxItems = 64

// DefaultStringBytes caps a string whose field has no `limit` tag.
const DefaultStringBytes = 4096

// field is one declared key of a contract object.
type field struct {
	name     string
	index    int
	typ      reflect.Type
	required bool
	limit    int
	enum     []string
	// min and max bound a whole number (an int field must declare both tags).
	min, max int
}

// fieldsOf lists the declared keys of struct type t, in declaration order.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fd := field{name: name, index: i, typ: f.Type, required: !strings.Contains(opts, "omitempty"), limit: DefaultStringBytes}
		if l := f.Tag.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil {
				panic(fmt.Sprintf("contract: bad limit tag on %s.%s", t.Name(), f.Name))
			}
			fd.limit = n
		}
		if e := f.Tag.Get("enum"); e != "" {
			fd.enum = strings.Split(e, ",")
		}
		if f.Type.Kind() == reflect.Int {
			lo, err1 := strconv.Atoi(f.Tag.Get("min"))
			hi, err2 := strconv.Atoi(f.Tag.Get("max"))
			if err1 != nil || err2 != nil || lo > hi {
				panic(fmt.Sprintf("contract: int field %s.%s needs min and max tags", t.Name(), f.Name))
			}
			fd.min, fd.max = lo, hi
		}
		out = append(out, fd)
	}
	return out
}

// checker walks a decoded document alongside the Go type it must match and collects every
// problem of form: keys, types, list lengths, string caps, enums and secrets.
type checker struct {
	ps *problems
}

func (c *checker) value(path string, node any, t reflect.Type, fd field) {
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := node.(map[string]any)
		if !ok {
			c.ps.add(CodeWrongType, path, "expected an object, got %s", jsonschema.Kind(node))
			return
		}
		c.object(path, obj, t)
	case reflect.Slice:
		arr, ok := node.([]any)
		if !ok {
			c.ps.add(CodeWrongType, path, "expected an array, got %s (send [] for none)", jsonschema.Kind(node))
			return
		}
		if len(arr) > MaxItems {
			c.ps.add(CodeTooManyItems, path, "%d items, at most %d are accepted", len(arr), MaxItems)
			arr = arr[:MaxItems]
		}
		for i, el := range arr {
			c.value(fmt.Sprintf("%s[%d]", path, i), el, t.Elem(), fd)
		}
	case reflect.String:
		s, ok := node.(string)
		if !ok {
			c.ps.add(CodeWrongType, path, "expected a string, got %s", jsonschema.Kind(node))
			return
		}
		c.str(path, s, fd)
	case reflect.Bool:
		if _, ok := node.(bool); !ok {
			c.ps.add(CodeWrongType, path, "expected true or false, got %s", jsonschema.Kind(node))
		}
	case reflect.Int:
		c.integer(path, node, fd)
	default:
		panic(fmt.Sprintf("contract: unsupported field type %s", t))
	}
}

func (c *checker) object(path string, obj map[string]any, t reflect.Type) {
	fields := fieldsOf(t)
	byName := make(map[string]field, len(fields))
	for _, f := range fields {
		byName[f.name] = f
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := byName[k]; ok {
			continue
		}
		if c.secret(strictjson.KeyPath(path, "?"), k) {
			continue
		}
		shown := k
		if len(shown) > 64 {
			shown = shown[:64] + "…"
		}
		if i := slices.IndexFunc(fields, func(f field) bool { return strings.EqualFold(f.name, k) }); i >= 0 {
			c.ps.add(CodeKeyCase, strictjson.KeyPath(path, k), "unknown key %q; did you mean %q? keys are case-sensitive", shown, fields[i].name)
			continue
		}
		c.ps.add(CodeUnknownKey, strictjson.KeyPath(path, k), "unknown key %q; the keys are: %s", shown, names(fields))
	}
	for _, f := range fields {
		v, ok := obj[f.name]
		p := strictjson.KeyPath(path, f.name)
		if !ok {
			if f.required {
				c.ps.add(CodeMissingField, p, "missing required key")
			}
			continue
		}
		c.value(p, v, f.typ, f)
	}
}

func names(fields []field) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = f.name
	}
	return strings.Join(s, ", ")
}

func (c *checker) str(path, s string, fd field) {
	if len(s) > fd.limit {
		c.ps.add(CodeStringTooLarge, path, "%d bytes, at most %d are accepted", len(s), fd.limit)
	}
	if fd.enum != nil {
		if !slices.Contains(fd.enum, s) {
			c.ps.add(CodeBadEnum, path, "must be one of %s", strings.Join(fd.enum, ", "))
		}
		return
	}
	if strings.TrimSpace(s) == "" && fd.name != "body" {
		c.ps.add(CodeEmptyString, path, "must not be empty")
		return
	}
	c.secret(path, s)
}

// integer checks a whole number within the field's bounds.
func (c *checker) integer(path string, node any, fd field) {
	n, ok := node.(json.Number)
	if !ok {
		c.ps.add(CodeWrongType, path, "expected a whole number, got %s", jsonschema.Kind(node))
		return
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		c.ps.add(CodeWrongType, path, "expected a whole number, got %s", n)
		return
	}
	if err != nil || v < int64(fd.min) || v > int64(fd.max) {
		c.ps.add(CodeOutOfRange, path, "%s is outside %d to %d", n, fd.min, fd.max)
	}
}

// secret scans s and reports whether it holds a secret (or could not be scanned). The
// secret itself is never repeated.
func (c *checker) secret(path, s string) bool {
	fs, err := secret.Scan(s)
	if err != nil {
		c.ps.add(CodeSecretScanError, path, "the secret scan failed, so the text is refused: %v", err)
		return true
	}
	for _, f := range fs {
		c.ps.add(CodeSecret, path, "looks like a secret (%s, %s); contracts must not carry secrets: leave it out or describe it", f.RuleID, f.Preview)
	}
	return len(fs) > 0
}

// limitSchema adds to s (the schema [jsonschema.For] made for t) what the tags say: maxItems
// on lists, maxLength on strings (in characters, a hint: the byte cap is checked by code),
// enums (with no maxLength: the enum bounds the string).
func limitSchema(s *jsonschema.Schema, t reflect.Type) {
	if s == nil {
		return
	}
	for _, f := range fieldsOf(t) {
		p := s.Properties[f.name]
		if p == nil {
			continue
		}
		switch f.typ.Kind() {
		case reflect.Slice:
			p.MaxItems = ptr(MaxItems)
			el := f.typ.Elem()
			switch el.Kind() {
			case reflect.String:
				if p.Items != nil {
					p.Items.MaxLength = ptr(f.limit)
				}
			case reflect.Struct:
				limitSchema(p.Items, el)
			}
		case reflect.String:
			if f.enum == nil {
				p.MaxLength = ptr(f.limit)
				continue
			}
			// The enum bounds the string (the byte cap is still checked by code).
			p.Enum = make([]any, len(f.enum))
			for i, e := range f.enum {
				p.Enum[i] = e
			}
		case reflect.Struct:
			limitSchema(p, f.typ)
		case reflect.Int:
			p.Minimum, p.Maximum = ptr(float64(f.min)), ptr(float64(f.max))
		}
	}
}

func ptr[T any](v T) *T { return &v }
