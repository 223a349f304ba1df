package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// UnmarshalLoose checks data as [Check] does (one value, no duplicate keys, no invalid
// escapes) and decodes it into v with encoding/json, members v has no field for ignored: for
// files whose format another program owns (Claude Code's settings, plugin manifests), read as
// leniently as that program reads them but never ambiguously.
func UnmarshalLoose(data []byte, v any) error {
	if err := Check(data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Unmarshal decodes data into v (a non-nil pointer) strictly: data must pass [Decode], and every
// object key must be the exact JSON name of a field of the struct it decodes into (no unknown
// keys, no keys differing only in case). Errors name the path of the offending key.
func Unmarshal(data []byte, v any) error {
	tree, err := decode(data)
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: Unmarshal needs a non-nil pointer, got %T", v)
	}
	if err := checkKeys("", tree, rv.Type().Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// checkKeys walks the decoded tree alongside the Go type it will be decoded into.
func checkKeys(path string, node any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n := node.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Map:
			for k, child := range n {
				if err := checkKeys(KeyPath(path, k), child, t.Elem()); err != nil {
					return err
				}
			}
		case reflect.Struct:
			fields := jsonFields(t)
			for _, k := range sortedKeys(n) {
				ft, ok := fields[k]
				if !ok {
					for name := range fields {
						if strings.EqualFold(name, k) {
							return fmt.Errorf("%s: unknown field %q (did you mean %q? names are case-sensitive)", ShowPath(path), k, name)
						}
					}
					return fmt.Errorf("%s: unknown field %q (known fields: %s)", ShowPath(path), k, strings.Join(sortedNames(fields), ", "))
				}
				if err := checkKeys(KeyPath(path, k), n[k], ft); err != nil {
					return err
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, child := range n {
				if err := checkKeys(fmt.Sprintf("%s[%d]", path, i), child, t.Elem()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's fields (including promoted ones) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range Fields(t) {
		out[f.Name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedNames(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
