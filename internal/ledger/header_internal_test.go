package ledger

import (
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/strictjson"
)

// decodeHeader reads a header body exactly as strictjson.Unmarshal does into a Header: the
// same bodies accepted with the same values, the same bodies refused.
func TestDecodeHeaderAgreesWithStrictUnmarshal(t *testing.T) {
	bodies := []string{
		`{"type":"session","id":"abc","format":1}`,
		`{"type":"run","id":"r-1","format":1,"bindings":{"cwd":"/w","lock":"sha256:00"}}`,
		`{"id":"x","type":"loop","format":3,"bindings":{}}`,
		`{"type":"session","id":"a","format":1,"bindings":null}`,
		`{"type":null,"id":"a","format":null}`,
		`{}`,
		`{"type":"session","id":"a\u0062c","format":1,"bindings":{"k\"q":"v\\w"}}`,
		`{"typ\u0065":"session","id":"a","format":1}`,
		// refused
		`{"type":"session","id":"a","format":1,"extra":true}`,
		`{"Type":"session","id":"a","format":1}`,
		`{"type":5,"id":"a","format":1}`,
		`{"type":"session","id":["a"],"format":1}`,
		`{"type":"session","id":"a","format":"1"}`,
		`{"type":"session","id":"a","format":1.5}`,
		`{"type":"session","id":"a","format":1,"bindings":[]}`,
		`{"type":"session","id":"a","format":1,"bindings":{"k":1}}`,
		`{"type":"session","id":"a","format":1,"bindings":"k"}`,
		`{"type":"session","type":"run","id":"a","format":1}`,
		`{"extra":null}`,
		`[]`,
		`"header"`,
		`{"type":"session"`,
	}
	for _, b := range bodies {
		var want, got Header
		werr := strictjson.Unmarshal([]byte(b), &want)
		gerr := decodeHeader([]byte(b), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: strictjson.Unmarshal error %v, decodeHeader error %v", b, werr, gerr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Errorf("%s: strictjson.Unmarshal %+v, decodeHeader %+v", b, want, got)
		}
	}
}

// headerKeys names every field of Header by its JSON name.
func TestHeaderKeysAreTheFields(t *testing.T) {
	var names []string
	for _, f := range strictjson.Fields(reflect.TypeOf(Header{})) {
		names = append(names, f.Name)
	}
	if !reflect.DeepEqual(names, headerKeys) {
		t.Fatalf("Header's JSON names are %v, headerKeys %v", names, headerKeys)
	}
}
