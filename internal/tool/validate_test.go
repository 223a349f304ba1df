package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/jsonschema"
)

type testEdit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

type testArgs struct {
	Path  string     `json:"path"`
	Edits []testEdit `json:"edits"`
	Limit *int       `json:"limit,omitempty"`
	Mode  string     `json:"mode,omitempty"`
}

var testSpec = Spec{
	Name: "edit",
	Schema: MustSchemaFor[testArgs](func(s *jsonschema.Schema) {
		s.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
		s.Properties["mode"].Enum = []any{"fast", "slow"}
		s.Properties["edits"].MinItems = jsonschema.Ptr(1)
	}),
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		problems []string // nil means valid
	}{
		{name: "valid", raw: `{"path":"a.go","edits":[{"oldText":"x","newText":"y"}],"limit":3,"mode":"fast"}`},
		{name: "valid with whitespace and null optional", raw: " \n{\"path\":\"a\",\"edits\":[{\"oldText\":\"\",\"newText\":\"\"}],\"limit\":null}\n "},
		{
			name:     "integer written as 2.0",
			raw:      `{"path":"a","edits":[{"oldText":"x","newText":"y"}],"limit":2.0}`,
			problems: []string{"limit: expected null or integer, got number 2.0"},
		},
		{
			name:     "unknown field",
			raw:      `{"path":"a","edits":[{"oldText":"x","newText":"y"}],"force":true}`,
			problems: []string{"force: unknown property (expected one of: edits, limit, mode, path)"},
		},
		{
			name:     "nested unknown field",
			raw:      `{"path":"a","edits":[{"oldText":"x","newText":"y","replaceAll":true}]}`,
			problems: []string{"edits[0].replaceAll: unknown property (expected one of: newText, oldText)"},
		},
		{
			name:     "duplicate key",
			raw:      `{"path":"a","path":"b","edits":[]}`,
			problems: []string{`path: duplicate key "path"; each property may appear only once`},
		},
		{
			name:     "nested duplicate key",
			raw:      `{"path":"a","edits":[{"oldText":"x","newText":"y"},{"oldText":"x","newText":"y","newText":"z"}]}`,
			problems: []string{`edits[1].newText: duplicate key "newText"; each property may appear only once`},
		},
		{
			name: "case mismatch",
			raw:  `{"path":"a","edits":[{"oldtext":"x","newText":"y"}]}`,
			problems: []string{
				"edits[0].oldText: missing required property",
				`edits[0].oldtext: unknown property; did you mean "oldText"? (property names are case-sensitive)`,
			},
		},
		{
			name:     "invalid utf-8",
			raw:      "{\"path\":\"a\xff\",\"edits\":[]}",
			problems: []string{"(root): arguments are not valid UTF-8 (first bad byte at offset 10)"},
		},
		{
			name:     "trailing data",
			raw:      `{"path":"a","edits":[{"oldText":"x","newText":"y"}]} {"x":1}`,
			problems: []string{`(root): unexpected data after the JSON value at offset 53: "{\"x\":1}"`},
		},
		{
			name:     "trailing garbage",
			raw:      `{"path":"a","edits":[{"oldText":"x","newText":"y"}]}}`,
			problems: []string{`(root): unexpected data after the JSON value at offset 52: "}"`},
		},
		{
			name:     "not an object",
			raw:      `["a"]`,
			problems: []string{"(root): arguments must be a JSON object, got array"},
		},
		{
			name:     "truncated",
			raw:      `{"path":"a","edits":[{"oldText":"x`,
			problems: []string{`edits[0].oldText: invalid JSON at end of input: unterminated string`},
		},
		{
			name:     "wrong type",
			raw:      `{"path":7,"edits":[{"oldText":"x","newText":"y"}],"limit":"10"}`,
			problems: []string{"limit: expected null or integer, got string \"10\"", "path: expected string, got integer 7"},
		},
		{
			name:     "missing required",
			raw:      `{"edits":[{"newText":"y"}]}`,
			problems: []string{"path: missing required property", "edits[0].oldText: missing required property"},
		},
		{
			name:     "null for required",
			raw:      `{"path":"a","edits":null}`,
			problems: []string{"edits: expected array, got null"},
		},
		{
			name:     "enum and minimum and minItems",
			raw:      `{"path":"a","edits":[],"limit":0,"mode":"medium"}`,
			problems: []string{"edits: must have at least 1 items; got 0", "limit: must be >= 1; got 0", `mode: must be one of "fast", "slow"; got string "medium"`},
		},
		{
			name:     "non-integer",
			raw:      `{"path":"a","edits":[{"oldText":"x","newText":"y"}],"limit":1.5}`,
			problems: []string{"limit: expected null or integer, got number 1.5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Validate(testSpec, tt.raw)
			if tt.problems == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				var a testArgs
				if err := json.Unmarshal(got, &a); err != nil || a.Path == "" {
					t.Fatalf("result %s does not decode: %v", got, err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate error = %v (%T), want *ValidationError", err, err)
			}
			if diff := cmp.Diff(tt.problems, ve.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "Validation failed for tool \"edit\":\n  - ") || !strings.Contains(msg, "\n\nReceived arguments:\n") {
				t.Errorf("message layout:\n%s", msg)
			}
		})
	}
}

func TestValidateMessage(t *testing.T) {
	raw := `{"path":"a","edits":[{"newText":"y"}]}`
	_, err := Validate(testSpec, raw)
	want := "Validation failed for tool \"edit\":\n  - edits[0].oldText: missing required property\n\nReceived arguments:\n" + raw
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

func TestValidateEmptyAndBadSchema(t *testing.T) {
	if got, err := Validate(Spec{Name: "x"}, "  "); err != nil || string(got) != "{}" {
		t.Errorf("blank args with no schema: %s, %v", got, err)
	}
	empty := Spec{Name: "noargs", Schema: MustSchemaFor[struct{}]()}
	if _, err := Validate(empty, ""); err != nil {
		t.Errorf("blank args: %v", err)
	}
	_, err := Validate(empty, `{"a":1}`)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Problems[0] != "a: unknown property (this object takes no properties)" {
		t.Errorf("unknown on empty schema: %v", err)
	}
	_, err = Validate(Spec{Name: "bad", Schema: json.RawMessage(`{"type":`)}, `{}`)
	if err == nil || errors.As(err, &ve) {
		t.Errorf("bad schema: %v", err)
	}
}

func TestValidateBackstop(t *testing.T) {
	// pattern is not checked by the walker; package jsonschema catches it, naming the path
	// and the keyword.
	spec := Spec{Name: "p", Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}},"additionalProperties":false}`)}
	if _, err := Validate(spec, `{"id":"abc"}`); err != nil {
		t.Fatal(err)
	}
	_, err := Validate(spec, `{"id":"ABC"}`)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0] != `id: must match the pattern "^[a-z]+$" (pattern)` {
		t.Errorf("pattern violation: %v", err)
	}
}

func TestValidateReceivedIsCapped(t *testing.T) {
	raw := `{"path":1,"edits":[{"oldText":"` + strings.Repeat("é", 5000) + `","newText":""}]}`
	_, err := Validate(testSpec, raw)
	if err == nil || !strings.Contains(err.Error(), "more bytes not shown]") || len(err.Error()) > 5000 {
		t.Errorf("long args not capped: %d bytes", len(err.Error()))
	}
}

type prepTool struct{ fakeTool }

func (prepTool) PrepareArgs(args map[string]any) (bool, error) {
	s, ok := args["edits"].(string)
	if !ok {
		return false, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return false, err
	}
	args["edits"] = v
	return true, nil
}

func TestValidateCallPreparer(t *testing.T) {
	tl := prepTool{fakeTool{spec: testSpec}}
	got, err := ValidateCall(tl, `{"path":"a","edits":"[{\"oldText\":\"x\",\"newText\":\"y\"}]","limit":12345678901234567}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"edits":[{"newText":"y","oldText":"x"}],"limit":12345678901234567,"path":"a"}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

type fakeTool struct{ spec Spec }

func (f fakeTool) Spec() Spec                                { return f.spec }
func (f fakeTool) Run(context.Context, Call) (Result, error) { return TextResult("ok"), nil }

func BenchmarkValidate(b *testing.B) {
	raw := `{"path":"internal/tool/validate.go","edits":[{"oldText":"func (w *walker) add(path, format string, args ...any) {","newText":"func (w *walker) add(path, msg string) {"},{"oldText":"return x","newText":"return y"}],"limit":10,"mode":"fast"}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate(testSpec, raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateInvalid(b *testing.B) {
	raw := `{"path":"a","edits":[{"oldtext":"x","newText":"y"}],"extra":1}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate(testSpec, raw); err == nil {
			b.Fatal("want error")
		}
	}
}

func TestValidateFollowsReferences(t *testing.T) {
	// A draft-07 MCP-style schema: the walker does not follow $ref; package jsonschema does.
	spec := Spec{Name: "mcp__gh__create_issue", Schema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#",` +
		`"definitions":{"Label":{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}},` +
		`"type":"object","properties":{"title":{"type":"string"},"labels":{"type":"array","items":{"$ref":"#/definitions/Label"}}},"required":["title"]}`)}
	if _, err := Validate(spec, `{"title":"t","labels":[{"name":"bug"}]}`); err != nil {
		t.Fatal(err)
	}
	_, err := Validate(spec, `{"title":"t","labels":[{"name":"bug"},{"nme":"x"}]}`)
	var ve *ValidationError
	if !errors.As(err, &ve) || strings.Join(ve.Problems, "\n") != "labels[1].name: missing required property (required)\nlabels[1].nme: unknown property (additionalProperties)" {
		t.Errorf("problem in a referenced definition: %v", err)
	}
	remote := Spec{Name: "r", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)}
	_, err = Validate(remote, `{}`)
	if err == nil || errors.As(err, &ve) || !strings.Contains(err.Error(), `"https://example.com/a.json"`) {
		t.Errorf("remote reference: %v", err)
	}
}
