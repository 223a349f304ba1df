package jsonschema

import (
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/strictjson"
)

// Schemas in the shapes real MCP servers send.
const (
	// A filesystem server (2020-12, $defs, $ref with siblings).
	fsServer = `{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "type": "object",
	  "properties": {
	    "path": {"$ref": "#/$defs/path", "description": "file to edit"},
	    "edits": {"type": "array", "items": {"$ref": "#/$defs/edit"}, "minItems": 1},
	    "dryRun": {"type": "boolean", "default": false}
	  },
	  "required": ["path", "edits"],
	  "additionalProperties": false,
	  "$defs": {
	    "path": {"type": "string", "minLength": 1},
	    "edit": {"type": "object", "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
	             "required": ["oldText", "newText"], "additionalProperties": false}
	  }
	}`
	// A draft-07 server generated from TypeScript types (definitions, $ref, anyOf with null).
	draft07Server = `{
	  "$schema": "http://json-schema.org/draft-07/schema#",
	  "definitions": {
	    "Issue": {"type": "object", "properties": {"title": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
	              "state": {"type": "string", "enum": ["open", "closed"]}}, "required": ["title"]},
	    "Repo": {"type": "string", "pattern": "^[\\w.-]+/[\\w.-]+$"}
	  },
	  "type": "object",
	  "properties": {
	    "repo": {"$ref": "#/definitions/Repo"},
	    "issue": {"$ref": "#/definitions/Issue"},
	    "milestone": {"anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}]}
	  },
	  "required": ["repo", "issue"],
	  "additionalProperties": false
	}`
	// A recursive tree (a node's children are nodes).
	treeSchema = `{
	  "type": "object",
	  "properties": {"root": {"$ref": "#/$defs/node"}},
	  "$defs": {"node": {"$anchor": "node", "type": "object", "properties": {"name": {"type": "string"},
	    "children": {"type": "array", "items": {"$ref": "#node"}}}, "required": ["name"], "additionalProperties": false}}
	}`
)

func TestMCPShapedSchemas(t *testing.T) {
	for _, c := range []struct {
		name, schema string
		valid        []string
		invalid      map[string]string // instance -> text its error must hold
	}{
		{"filesystem", fsServer,
			[]string{`{"path":"a.txt","edits":[{"oldText":"a","newText":"b"}]}`, `{"path":"a","edits":[{"oldText":"","newText":""}],"dryRun":true}`},
			map[string]string{
				`{"path":"","edits":[{"oldText":"a","newText":"b"}]}`:        "path: must be at least 1 characters long",
				`{"path":"a","edits":[]}`:                                    "edits: must have at least 1 items",
				`{"path":"a","edits":[{"oldText":"a"}]}`:                     "edits[0].newText: missing required property",
				`{"path":"a","edits":[{"oldText":"a","newText":"b","x":1}]}`: "edits[0].x: unknown property",
			}},
		{"draft-07", draft07Server,
			[]string{`{"repo":"o/r","issue":{"title":"t","labels":["a","b"],"state":"open"}}`, `{"repo":"o/r","issue":{"title":"t"},"milestone":null}`, `{"repo":"o/r","issue":{"title":"t"},"milestone":3}`},
			map[string]string{
				`{"repo":"not a repo","issue":{"title":"t"}}`:             "repo: must match the pattern",
				`{"repo":"o/r","issue":{"title":"t","labels":["a","a"]}}`: "issue.labels: items 0 and 1 are equal",
				`{"repo":"o/r","issue":{"title":"t","state":"merged"}}`:   `issue.state: must be one of ["open","closed"]`,
				`{"repo":"o/r","issue":{"title":"t"},"milestone":0}`:      "milestone: matches none of the 2 alternatives",
			}},
		{"tree", treeSchema,
			[]string{`{"root":{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}}`},
			map[string]string{`{"root":{"name":"a","children":[{"name":"b","children":[{}]}]}}`: "root.children[0].children[0].name: missing required property"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range c.valid {
				if err := check(t, c.schema, v); err != nil {
					t.Errorf("refused %s: %v", v, err)
				}
			}
			for v, want := range c.invalid {
				if err := check(t, c.schema, v); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: got %v, want %q", v, err, want)
				}
			}
		})
	}
}

func TestResolveReferences(t *testing.T) {
	for _, c := range []struct{ name, schema, valid, invalid string }{
		{"pointer with escapes", `{"$defs":{"a/b":{"type":"string"},"c~d":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c~0d"}}}`, `{"x":"s","y":1}`, `{"y":"s"}`},
		{"percent-encoded pointer", `{"$defs":{"a b":{"type":"string"}},"$ref":"#/$defs/a%20b"}`, `"s"`, `1`},
		{"pointer into properties", `{"properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, `{"b":"s"}`, `{"b":1}`},
		{"pointer into an unknown keyword", `{"components":{"schemas":{"Id":{"type":"integer"}}},"properties":{"id":{"$ref":"#/components/schemas/Id"}}}`, `{"id":1}`, `{"id":"x"}`},
		{"embedded $id", `{"$id":"https://example.com/root.json","$defs":{"n":{"$id":"num.json","type":"number"}},"$ref":"num.json"}`, `1`, `"x"`},
		{"relative $id without a base", `{"$defs":{"n":{"$id":"defs/num","$defs":{"pos":{"minimum":0}},"$ref":"#/$defs/pos"}},"$ref":"defs/num"}`, `1`, `-1`},
		{"draft-07 $id anchor", `{"definitions":{"s":{"$id":"#str","type":"string"}},"$ref":"#str"}`, `"s"`, `1`},
		{"root $ref", `{"properties":{"next":{"$ref":"#"}},"type":"object"}`, `{"next":{"next":{}}}`, `{"next":{"next":1}}`},
		{"urn $id", `{"$id":"urn:example:tool","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"},"b":{"$ref":"urn:example:tool#/$defs/s"}}}`, `{"a":"x","b":"y"}`, `{"b":1}`},
		{"relative root $id", `{"$id":"tool-args","$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`, `"x"`, `1`},
		{"$ref with siblings", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":2}`, `"ab"`, `"abc"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := check(t, c.schema, c.valid); err != nil {
				t.Errorf("refused %s: %v", c.valid, err)
			}
			if err := check(t, c.schema, c.invalid); err == nil {
				t.Errorf("accepted %s", c.invalid)
			}
		})
	}
}

func TestResolveRefusals(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"$ref":"https://example.com/other.json"}`, `"https://example.com/other.json"`},
		{`{"$ref":"other.json#/x"}`, `"other.json#/x"`},
		{`{"$ref":"#/$defs/missing"}`, `names nothing`},
		{`{"$ref":"#nowhere"}`, `no $anchor "nowhere"`},
	} {
		s, err := Parse([]byte(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s", c.schema, err, c.want)
		}
	}
	s, _ := Parse([]byte(`{"$ref":"https://example.com/x.json"}`))
	if _, err := Resolve(s); !errors.Is(err, errRemoteRef) {
		t.Errorf("remote ref: %v is not errRemoteRef", err)
	}
}

func TestReferenceCycleStops(t *testing.T) {
	err := check(t, `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `1`)
	if err == nil || !strings.Contains(err.Error(), "leads back to itself") {
		t.Errorf("cycle: %v", err)
	}
}

func TestSkippedPatterns(t *testing.T) {
	s, _ := Parse([]byte(`{"properties":{"a":{"pattern":"(?<=x)y"},"b":{"pattern":"^ok$"}},"patternProperties":{"(\\w)\\1":{}}}`))
	r, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Skipped(), " "); got != `(?<=x)y (\w)\1` {
		t.Errorf("skipped %q", got)
	}
}

// BenchmarkCompileValidate is the work for one tool call whose schema is not cached yet: parse
// the filesystem server's schema, resolve it, decode the arguments and validate them.
func BenchmarkCompileValidate(b *testing.B) {
	schema := []byte(fsServer)
	args := `{"path":"internal/tool/validate.go","edits":[{"oldText":"func validate(","newText":"func validateCall("},{"oldText":"a","newText":"b"}],"dryRun":false}`
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(schema)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Resolve(s)
		if err != nil {
			b.Fatal(err)
		}
		v, err := strictjson.Decode(args)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate is a tool call against a schema already resolved (the cached case).
func BenchmarkValidate(b *testing.B) {
	s, _ := Parse([]byte(fsServer))
	r, err := Resolve(s)
	if err != nil {
		b.Fatal(err)
	}
	v, _ := strictjson.Decode(`{"path":"internal/tool/validate.go","edits":[{"oldText":"func validate(","newText":"func validateCall("},{"oldText":"a","newText":"b"}],"dryRun":false}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}
