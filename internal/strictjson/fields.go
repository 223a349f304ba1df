package strictjson

import (
	"reflect"
	"strings"
)

// Field is one member of a struct type's JSON object, named as encoding/json names it.
type Field struct {
	reflect.StructField
	// Name is the member's JSON name: the json tag's, else the Go field's.
	Name string
	// Options are the json tag's options after the name ("omitempty", "omitzero", "string").
	Options []string
}

// Fields lists the JSON members of struct type t in declaration order, those of an embedded
// struct (or pointer to one) without a json name in its place. A field tagged "-" and an
// unexported one are left out, and a name an outer field already has shadows an embedded
// field's (the first at the same depth wins).
func Fields(t reflect.Type) []Field {
	type found struct {
		Field
		depth int
	}
	var all []found
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			var options []string
			if opts != "" {
				options = strings.Split(opts, ",")
			}
			all = append(all, found{Field{StructField: f, Name: name, Options: options}, depth})
		}
	}
	walk(t, 0)
	best := map[string]int{} // name → the depth that wins it
	for _, f := range all {
		if d, ok := best[f.Name]; !ok || f.depth < d {
			best[f.Name] = f.depth
		}
	}
	out := make([]Field, 0, len(all))
	for _, f := range all {
		if best[f.Name] == f.depth {
			out = append(out, f.Field)
			best[f.Name] = -1 // taken
		}
	}
	return out
}

// HasOption reports whether the field's json tag carries option o.
func (f Field) HasOption(o string) bool {
	for _, x := range f.Options {
		if x == o {
			return true
		}
	}
	return false
}
