package strictjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	v, err := Decode(` [1, {"a": "x\u00e9\n"}, true, null] `)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{json.Number("1"), map[string]any{"a": "xé\n"}, true, nil}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Error(diff)
	}
	for in, msg := range map[string]string{
		`[{"a":1,"a":2}]`: `[0].a: duplicate key "a"`,
		`{"a":[1,]}`:      `a[1]: invalid JSON at offset 8`,
		`1 2`:             `(root): unexpected data after the JSON value at offset 2`,
		"\"\xff\"":        `(root): not valid UTF-8`,
		`{"a":01}`:        `(root): invalid JSON at offset 6 (near "1}"): expected ',' or '}'`,
		`"a` + "\t" + `"`: `control character in string`,
		`{"a":-}`:         `a: invalid JSON at offset 6 (near "}"): malformed number`,
	} {
		if _, err := Decode(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Decode(%q) = %v, want %q", in, err, msg)
		}
	}
}
