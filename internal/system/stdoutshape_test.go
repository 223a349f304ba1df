package system

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// TestStdoutSpanShape pins the JSON of --trace stdout and file:PATH to what the OpenTelemetry
// Go stdout exporter wrote before rein made its spans itself: testdata/stdout-spans.golden.jsonl
// holds spans captured from that build (a run, a retried chat with its event, a failed chat, a
// session write). Each span rein writes now has the same keys in the same order, with values of
// the same JSON types, and every attribute's Value matches its Type.
func TestStdoutSpanShape(t *testing.T) {
	data, err := os.ReadFile("testdata/stdout-spans.golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string]jsonNode{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		n := parseJSON(t, line)
		golden[spanShapeKey(n)] = n
	}
	var got []jsonNode
	for _, prompt := range []string{"please do it", "terminal"} {
		_, full := tracedRun(t, prompt)
		for _, line := range strings.Split(strings.TrimSpace(full), "\n") {
			got = append(got, parseJSON(t, line))
		}
	}
	matched := map[string]bool{}
	for _, n := range got {
		checkAttributeTypes(t, n)
		g, ok := golden[spanShapeKey(n)]
		if !ok {
			continue
		}
		matched[spanShapeKey(n)] = true
		if diff := sameShape(g, n, ""); diff != "" {
			t.Errorf("%s: %s", spanShapeKey(n), diff)
		}
	}
	for k := range golden {
		if !matched[k] {
			t.Errorf("no span like the golden %s was written", k)
		}
	}
}

// spanShapeKey names the kind of span a golden line stands for.
func spanShapeKey(n jsonNode) string {
	name := n.get("Name").str
	if name != "invoke_agent rein" && name != "rein.session.write" {
		name, _, _ = strings.Cut(name, " ")
	}
	return fmt.Sprintf("%s status=%s events=%v", name, n.get("Status").get("Code").str, n.get("Events").kind == '[')
}

// jsonNode is a JSON value with its object keys in order.
type jsonNode struct {
	kind  byte // '{', '[', 's' string, 'n' number, 'b' bool, '0' null
	str   string
	keys  []string
	vals  []jsonNode // an object's values, or an array's elements
	index map[string]int
}

func (n jsonNode) get(k string) jsonNode {
	if i, ok := n.index[k]; ok {
		return n.vals[i]
	}
	return jsonNode{}
}

func parseJSON(t *testing.T, s string) jsonNode {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		t.Fatalf("%v in %.200s", err, s)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("trailing data after %.200s", s)
	}
	return n
}

func decodeNode(dec *json.Decoder) (jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonNode{}, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := jsonNode{kind: byte(v), index: map[string]int{}}
		for dec.More() {
			if v == '{' {
				k, err := dec.Token()
				if err != nil {
					return n, err
				}
				n.index[k.(string)] = len(n.keys)
				n.keys = append(n.keys, k.(string))
			}
			x, err := decodeNode(dec)
			if err != nil {
				return n, err
			}
			n.vals = append(n.vals, x)
		}
		_, err := dec.Token() // the closing delimiter
		return n, err
	case string:
		return jsonNode{kind: 's', str: v}, nil
	case json.Number:
		return jsonNode{kind: 'n', str: v.String()}, nil
	case bool:
		return jsonNode{kind: 'b', str: fmt.Sprint(v)}, nil
	}
	return jsonNode{kind: '0'}, nil
}

// fixedValues are the fields whose values do not change from span to span of a kind (parents
// are local and sampled, nothing is dropped, one scope).
var fixedValues = map[string]bool{".SpanContext.TraceFlags": true, ".SpanContext.TraceState": true, ".SpanContext.Remote": true,
	".Parent.TraceFlags": true, ".Parent.TraceState": true, ".Parent.Remote": true, ".SpanKind": true, ".Status.Code": true,
	".DroppedAttributes": true, ".DroppedEvents": true, ".DroppedLinks": true, ".InstrumentationScope.Name": true,
	".InstrumentationScope.SchemaURL": true, ".InstrumentationLibrary.Name": true, ".InstrumentationLibrary.SchemaURL": true}

// sameShape compares want and got: kinds, object keys and their order, the elements of an
// array against the first element the golden array has, and the fixedValues. An attribute's
// Value (whose type depends on the attribute) is checked by checkAttributeTypes instead.
func sameShape(want, got jsonNode, path string) string {
	if want.kind != got.kind {
		return fmt.Sprintf("%s: %c, want %c", path, got.kind, want.kind)
	}
	if fixedValues[path] && want.str != got.str {
		return fmt.Sprintf("%s: %s, want %s", path, got.str, want.str)
	}
	switch want.kind {
	case '{':
		if strings.Join(want.keys, ",") != strings.Join(got.keys, ",") {
			return fmt.Sprintf("%s: keys %v, want %v", path, got.keys, want.keys)
		}
		for i, k := range want.keys {
			if k == "Value" && strings.HasSuffix(path, ".Value") {
				continue
			}
			if d := sameShape(want.vals[i], got.vals[i], path+"."+k); d != "" {
				return d
			}
		}
	case '[':
		if len(want.vals) == 0 {
			return ""
		}
		for i, x := range got.vals {
			if d := sameShape(want.vals[0], x, fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	}
	return ""
}

// checkAttributeTypes checks every {Key, Value: {Type, Value}} of a span: the value's JSON type
// is the one its Type says.
func checkAttributeTypes(t *testing.T, span jsonNode) {
	t.Helper()
	var lists []jsonNode
	lists = append(lists, span.get("Attributes"), span.get("Resource"))
	for _, ev := range span.get("Events").vals {
		lists = append(lists, ev.get("Attributes"))
	}
	want := map[string]string{"STRING": "s", "INT64": "n", "FLOAT64": "n", "BOOL": "b", "STRINGSLICE": "[s"}
	for _, l := range lists {
		for _, a := range l.vals {
			v := a.get("Value")
			kind := string(v.get("Value").kind)
			if kind == "[" {
				kind = "[s"
				for _, x := range v.get("Value").vals {
					if x.kind != 's' {
						kind = "[?"
					}
				}
			}
			if w, ok := want[v.get("Type").str]; !ok || w != kind {
				t.Errorf("%s: attribute %s of type %s has a value of kind %s", span.get("Name").str, a.get("Key").str, v.get("Type").str, kind)
			}
			if v.get("Type").str == "INT64" && strings.ContainsAny(v.get("Value").str, ".eE") {
				t.Errorf("%s: INT64 attribute %s written as %s", span.get("Name").str, a.get("Key").str, v.get("Value").str)
			}
		}
	}
}
