package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	delivery "github.com/reinhq/rein/internal/run"
)

// Headings of the README sections whose tables document the JSON of `rein run status --json`
// and `rein run metrics --json`, one row per field path.
const (
	statusSchemaHeading  = "### `rein run status --json`"
	metricsSchemaHeading = "### `rein run metrics --json`"
)

// readmePath is the README's, resolved before a test changes directory.
var readmePath, _ = filepath.Abs(filepath.Join("..", "..", "README.md"))

// jsonPaths lists every field path the JSON encoding of t can hold: "a.b" for an object's
// field, "a[]" for a list's items, "a.*" for a map's values; embedded structs are inlined.
func jsonPaths(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(time.Time{}):
		out[prefix] = true
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				jsonPaths(f.Type, prefix, out)
				continue
			}
			if name == "" {
				name = f.Name
			}
			jsonPaths(f.Type, join(prefix, name), out)
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		jsonPaths(t.Elem(), prefix+"[]", out)
	case t.Kind() == reflect.Map:
		jsonPaths(t.Elem(), join(prefix, "*"), out)
	default:
		out[prefix] = true
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// documentedPaths reads the field paths of the README table under heading.
func documentedPaths(t *testing.T, heading string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n#"); j >= 0 {
		rest = rest[:j]
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(rest, -1) {
		out[m[1]] = true
	}
	return out
}

// TestJSONSchemasAreDocumented fails when `rein run status --json` or `rein run metrics --json`
// gains a field the README's table does not document, or the table documents one they lost
// (every leaf field must have its row; an object or list may have one too).
func TestJSONSchemasAreDocumented(t *testing.T) {
	for heading, v := range map[string]any{statusSchemaHeading: delivery.Report{}, metricsSchemaHeading: delivery.Metrics{}} {
		fields := map[string]bool{}
		jsonPaths(reflect.TypeOf(v), "", fields)
		documented := documentedPaths(t, heading)
		for _, p := range sorted(fields) {
			if !documented[p] {
				t.Errorf("%s: field %s is not documented in the README", heading, p)
			}
		}
		for _, p := range sorted(documented) {
			// A documented object or list is fine when fields below it exist.
			container := slices.ContainsFunc(sorted(fields), func(f string) bool { return strings.HasPrefix(f, p+".") || strings.HasPrefix(f, p+"[]") })
			if !fields[p] && !container {
				t.Errorf("%s: the README documents %s, which the JSON does not have", heading, p)
			}
		}
	}
}

// checkEmitted fails when a JSON document holds a field path the README's table under
// heading does not document (a map's keys match its "*").
func checkEmitted(t *testing.T, heading string, data []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v\n%s", heading, err, data)
	}
	documented := documentedPaths(t, heading)
	emitted := map[string]bool{}
	emittedPaths(v, "", emitted)
	for _, p := range sorted(emitted) {
		if !slices.ContainsFunc(sorted(documented), func(d string) bool { return pathMatches(d, p) }) {
			t.Errorf("%s: emitted field %s is not documented", heading, p)
		}
	}
}

func emittedPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && prefix != "" {
			out[join(prefix, "*")] = true // an empty object: only a map is ever empty
		}
		for k, e := range x {
			emittedPaths(e, join(prefix, k), out)
		}
	case []any:
		for _, e := range x {
			emittedPaths(e, prefix+"[]", out)
		}
	case nil:
		// null (an empty list encoded as null) names no field
	default:
		out[prefix] = true
	}
}

// pathMatches: documented path d ("a.*.b") matches emitted path p ("a.research.b").
func pathMatches(d, p string) bool {
	ds, ps := strings.Split(d, "."), strings.Split(p, ".")
	if len(ds) != len(ps) {
		return false
	}
	for i := range ds {
		switch {
		case ds[i] == ps[i]:
		case ds[i] == "*" && !strings.HasSuffix(ps[i], "[]"):
		case ds[i] == "*[]" && strings.HasSuffix(ps[i], "[]"):
		default:
			return false
		}
	}
	return true
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
