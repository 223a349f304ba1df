package strictjson

import (
	"strings"
	"testing"
)

type inner struct {
	Input float64 `json:"input"`
}

type outer struct {
	ID     string           `json:"id"`
	Window int              `json:"contextWindow,omitempty"`
	Cost   inner            `json:"cost"`
	List   []inner          `json:"list"`
	ByName map[string]inner `json:"byName"`
	Ptr    *inner           `json:"ptr"`
	Skip   string           `json:"-"`
	//lint:ignore U1000 an unexported field the decoder must leave alone
	hidden int
}

func TestUnmarshal(t *testing.T) {
	var o outer
	err := Unmarshal([]byte(`{"id":"x","contextWindow":5,"cost":{"input":1.5},"list":[{"input":2}],"byName":{"Any Key":{"input":3}},"ptr":{"input":4}}`), &o)
	if err != nil {
		t.Fatal(err)
	}
	if o.ID != "x" || o.Window != 5 || o.Cost.Input != 1.5 || o.List[0].Input != 2 || o.ByName["Any Key"].Input != 3 || o.Ptr.Input != 4 {
		t.Errorf("decoded %+v", o)
	}
	for in, want := range map[string]string{
		`{"ID":"x"}`:                   `(root): unknown field "ID" (did you mean "id"?`,
		`{"contextwindow":5}`:          `did you mean "contextWindow"`,
		`{"cost":{"Input":1}}`:         `cost: unknown field "Input"`,
		`{"list":[{"input":1,"x":2}]}`: `list[0]: unknown field "x" (known fields: input)`,
		`{"byName":{"k":{"inPut":1}}}`: `byName.k: unknown field "inPut"`,
		`{"id":"a","id":"b"}`:          `duplicate key "id"`,
		`{"Skip":"x"}`:                 `unknown field "Skip"`,
		`{"id":"x"} {}`:                `unexpected data after the JSON value`,
		"{\"id\":\"\xff\"}":            `not valid UTF-8`,
		`{"contextWindow":"5"}`:        `cannot unmarshal string`,
	} {
		var o outer
		if err := Unmarshal([]byte(in), &o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s) = %v, want an error containing %q", in, err, want)
		}
	}
	if err := Unmarshal([]byte(`{}`), outer{}); err == nil {
		t.Error("a non-pointer target was accepted")
	}
}

// TestUnmarshalLoose: members without a field are ignored; what Check refuses (a duplicate
// key, two values) is refused with Check's error.
func TestUnmarshalLoose(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	if err := UnmarshalLoose([]byte(`{"a": 1, "other": [true]}`), &v); err != nil || v.A != 1 {
		t.Fatalf("loose = %+v, %v", v, err)
	}
	for _, bad := range []string{`{"a": 1, "a": 2}`, `{"a": 1} {}`} {
		if err, want := UnmarshalLoose([]byte(bad), &v), Check([]byte(bad)); err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%s: %v, want Check's %v", bad, err, want)
		}
	}
}
