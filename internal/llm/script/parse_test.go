package script

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/llm"
)

func TestParseYAMLAndJSONAgree(t *testing.T) {
	y, err := Load("testdata/hello.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := Load("testdata/hello.json")
	if err != nil {
		t.Fatal(err)
	}
	if y.Name() != "script-hello" || j.Name() != "script-hello" {
		t.Errorf("names = %q, %q", y.Name(), j.Name())
	}
	wantPricing := llm.Pricing{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	if y.Pricing() != wantPricing || j.Pricing() != wantPricing {
		t.Errorf("pricing = %+v, %+v; want %+v", y.Pricing(), j.Pricing(), wantPricing)
	}
	for step := range 2 {
		req := requestAt("Say hello.", step)
		a, b := record(t.Context(), y, req).msg, record(t.Context(), j, req).msg
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("step %d: YAML and JSON answers differ (-yaml +json):\n%s", step, diff)
		}
	}
	first := record(t.Context(), y, requestAt("Say hello.", 0)).msg
	want := []llm.Part{
		llm.Thinking("The user wants a greeting file. I will write it."),
		llm.Text("I'll create hello.txt."),
		llm.Call(first.ToolCalls()[0].ID, "write", `{"path":"hello.txt","content":"Hello, world!\n"}`),
	}
	if diff := cmp.Diff(want, first.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if first.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q, want toolUse (the default with calls)", first.StopReason)
	}
	wantUsage := llm.Usage{Input: 120, Output: 30}
	wantUsage.Price(wantPricing)
	if *first.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", *first.Usage, wantUsage)
	}
}

func TestParseFormatByContent(t *testing.T) {
	// No telling extension: valid JSON is read as JSON (the \/ escape is JSON, not YAML) and
	// anything else as YAML.
	m, err := Parse([]byte(`{"version":1,"turns":[{"text":"a\/b \ud83d\ude00"}]}`), "inline")
	if err != nil {
		t.Fatal(err)
	}
	if got := record(t.Context(), m, requestAt("x", 0)).msg.Text(); got != "a/b 😀" {
		t.Errorf("text = %q", got)
	}
	if _, err := Parse([]byte("version: 1\nturns: [{text: hi}]\n"), ""); err != nil {
		t.Fatal(err)
	}
	// A YAML flow mapping that is not JSON, in a file without extension.
	if _, err := Parse([]byte("{version: 1, turns: [{text: hi}]}"), "x"); err != nil {
		t.Fatal(err)
	}
}

func TestParseArgs(t *testing.T) {
	const src = `
version: 1
turns:
  - calls:
      - name: edit
        args:
          path: a.go
          edits: [{oldText: "a<b", newText: "c&d"}]
          n: 0x10
          f: 1.50
          big: 12345678901234567890
          ok: true
          none: null
          when: 2024-01-02
      - name: ls
      - {name: bad, raw: '{"path": '}
`
	m, err := Parse([]byte(src), "args.yaml")
	if err != nil {
		t.Fatal(err)
	}
	calls := m.sc.dialogs[0].turns[0].calls
	want := []string{
		`{"path":"a.go","edits":[{"oldText":"a<b","newText":"c&d"}],"n":16,"f":1.50,"big":12345678901234567890,"ok":true,"none":null,"when":"2024-01-02"}`,
		`{}`,
		`{"path": `,
	}
	for i, w := range want {
		if calls[i].args != w {
			t.Errorf("call %d args = %s\nwant %s", i, calls[i].args, w)
		}
	}
}

func TestParseJSONArgsAndAliases(t *testing.T) {
	m, err := Parse([]byte(`{"version": 1, "turns": [{"calls": [{"name": "x", "args": {"a": [1, 2.5e0, true, false, null, "\/"], "b": {}}}]}]}`), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.sc.dialogs[0].turns[0].calls[0].args, `{"a":[1,2.5e0,true,false,null,"/"],"b":{}}`; got != want {
		t.Errorf("args = %s, want %s", got, want)
	}
	// YAML anchors and aliases work for fields and arguments alike.
	m, err = Parse([]byte(`
version: 1
turns:
  - text: &t same text
    calls: [{name: w, args: &a {path: x}}]
  - text: *t
    calls: [{name: w, args: *a}]
`), "alias.yaml")
	if err != nil {
		t.Fatal(err)
	}
	turns := m.sc.dialogs[0].turns
	if *turns[1].text != "same text" || turns[1].calls[0].args != `{"path":"x"}` {
		t.Errorf("aliases: text %q args %s", *turns[1].text, turns[1].calls[0].args)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, file, src string
		line            int
		field, msg      string
	}{
		{"unknown field", "s.yaml", "version: 1\nturns:\n  - text: hi\n    txet: typo\n", 4, "turns[0].txet", `unknown field "txet"`},
		{"unknown top field", "s.yaml", "version: 1\nturn: []\n", 2, "turn", `unknown field "turn"`},
		{"field names are case-sensitive", "s.json", `{"version": 1, "turns": [{"Text": "hi"}]}`, 1, "turns[0].Text", `unknown field "Text"`},
		{"duplicate field yaml", "s.yaml", "version: 1\nturns:\n  - text: a\n    text: b\n", 4, "turns[0].text", "duplicate field"},
		{"duplicate field json", "s.json", "{\"version\": 1,\n \"turns\": [{\"text\": \"a\",\n \"text\": \"b\"}]}", 3, "turns[0].text", "duplicate field"},
		{"bad stop", "s.yaml", "version: 1\nturns:\n  - text: hi\n    stop: done\n", 4, "turns[0].stop", `unknown stop reason "done"`},
		{"stop error is not scriptable", "s.yaml", "version: 1\nturns:\n  - text: hi\n    stop: error\n", 4, "turns[0].stop", "failures are scripted with error"},
		{"args not an object", "s.yaml", "version: 1\nturns:\n  - calls:\n      - name: ls\n        args: [1, 2]\n", 5, "turns[0].calls[0].args", "want a mapping"},
		{"args duplicate key", "s.yaml", "version: 1\nturns:\n  - calls:\n      - name: ls\n        args: {path: a, path: b}\n", 5, "turns[0].calls[0].args.path", "duplicate key"},
		{"args not JSON", "s.yaml", "version: 1\nturns:\n  - calls:\n      - name: ls\n        args: {n: .inf}\n", 5, "turns[0].calls[0].args.n", "not a JSON number"},
		{"args and raw", "s.yaml", "version: 1\nturns:\n  - calls:\n      - name: ls\n        args: {}\n        raw: '{}'\n", 6, "turns[0].calls[0].raw", "either args"},
		{"call without name", "s.yaml", "version: 1\nturns:\n  - calls:\n      - args: {}\n", 4, "turns[0].calls[0].name", "missing"},
		{"duplicate call id", "s.yaml", "version: 1\nturns:\n  - calls:\n      - {name: a, id: x}\n      - {name: b, id: x}\n", 5, "turns[0].calls[1].id", "duplicate tool-call id"},
		{"empty turn", "s.yaml", "version: 1\nturns:\n  - usage: {input: 1}\n", 3, "turns[0]", "at least one of"},
		{"missing version", "s.yaml", "turns:\n  - text: hi\n", 1, "version", "missing"},
		{"wrong version", "s.yaml", "version: 2\nturns:\n  - text: hi\n", 1, "version", "not supported"},
		{"no turns", "s.yaml", "version: 1\n", 1, "", "missing dialogs"},
		{"both dialogs and turns", "s.yaml", "version: 1\ndialogs: [{turns: [{text: a}]}]\nturns: [{text: b}]\n", 3, "turns", "not both"},
		{"empty dialog", "s.yaml", "version: 1\ndialogs:\n  - match: x\n    turns: []\n", 4, "dialogs[0].turns", "empty"},
		{"bad regexp", "s.yaml", "version: 1\ndialogs:\n  - match: '(unclosed'\n    turns: [{text: a}]\n", 3, "dialogs[0].match", "invalid regular expression"},
		{"text not a string", "s.yaml", "version: 1\nturns:\n  - text: 42\n", 3, "turns[0].text", "want a string"},
		{"bad delay", "s.yaml", "version: 1\nturns:\n  - text: hi\n    delay: fast\n", 4, "turns[0].delay", "want a duration"},
		{"negative usage", "s.yaml", "version: 1\nturns:\n  - text: hi\n    usage: {output: -1}\n", 4, "turns[0].usage.output", "at least 0"},
		{"negative price", "s.yaml", "version: 1\npricing: {input: -1}\nturns: [{text: hi}]\n", 2, "pricing.input", "at least 0"},
		{"bad error kind", "s.yaml", "version: 1\nturns:\n  - error: {kind: teapot}\n", 3, "turns[0].error.kind", `unknown error kind "teapot"`},
		{"aborted is not scriptable", "s.yaml", "version: 1\nturns:\n  - error: {kind: aborted}\n", 3, "turns[0].error.kind", "caller cancels"},
		{"times without error", "s.yaml", "version: 1\nturns:\n  - text: hi\n    times: 2\n", 4, "turns[0].times", "needs error"},
		{"error always with text", "s.yaml", "version: 1\nturns:\n  - text: hi\n    error: {kind: server}\n", 3, "turns[0]", "add times"},
		{"error times without answer", "s.yaml", "version: 1\nturns:\n  - error: {kind: server}\n    times: 1\n", 3, "turns[0]", "has no answer"},
		{"bad status", "s.yaml", "version: 1\nturns:\n  - error: {kind: server, status: 999}\n", 3, "turns[0].error.status", "from 100 to 599"},
		{"yaml syntax", "s.yaml", "version: 1\nturns:\n  - text: [unclosed\n", 2, "", "invalid YAML"},
		{"json syntax", "s.json", "{\"version\": 1,\n \"turns\": [}", 2, "", "invalid JSON"},
		{"json trailing data", "s.json", "{\"version\": 1, \"turns\": [{\"text\": \"a\"}]} {}", 1, "", "invalid JSON"},
		{"two yaml documents", "s.yaml", "version: 1\nturns: [{text: a}]\n---\nversion: 1\n", 3, "", "more than one YAML document"},
		{"empty file", "s.yaml", "  \n", 0, "", "empty"},
		{"invalid utf-8", "s.yaml", "version: 1\nturns: [{text: \"\xff\"}]\n", 2, "", "UTF-8"},
		{"not a mapping", "s.yaml", "- 1\n", 1, "", "want a mapping"},
		{"merge keys", "s.yaml", "version: 1\nturns:\n  - <<: {text: a}\n", 3, "turns[0].<<", `unknown field "<<"`},
		{"dialogs not a list", "s.yaml", "version: 1\ndialogs: {turns: []}\n", 2, "dialogs", "want a list"},
		{"json number for text", "s.json", `{"version": 1, "turns": [{"text": 1.5}]}`, 1, "turns[0].text", "want a string, got the number 1.5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), c.file)
			if err == nil {
				t.Fatal("parsed, want an error")
			}
			pe, ok := errors.AsType[*ParseError](err)
			if !ok {
				t.Fatalf("error %v is a %T, want *ParseError", err, err)
			}
			if pe.File != c.file || pe.Line != c.line || pe.Field != c.field || !strings.Contains(pe.Msg, c.msg) {
				t.Errorf("error = %q\n(file %q line %d field %q), want file %q line %d field %q and a message containing %q",
					err, pe.File, pe.Line, pe.Field, c.file, c.line, c.field, c.msg)
			}
			if !strings.HasPrefix(err.Error(), c.file) {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/no-such-file.yaml")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want one that wraps os.ErrNotExist", err)
	}
}

// TestFormatDocExamplesParse keeps docs/script-format.md honest: every complete YAML example
// in it (one that starts with "version:") parses.
func TestFormatDocExamplesParse(t *testing.T) {
	data, err := os.ReadFile("../../../docs/script-format.md")
	if err != nil {
		t.Skipf("format reference not found: %v", err)
	}
	blocks := strings.Split(string(data), "```yaml\n")
	n := 0
	for i, b := range blocks[1:] {
		src, _, _ := strings.Cut(b, "```")
		if !strings.HasPrefix(src, "version:") {
			continue
		}
		n++
		if _, err := Parse([]byte(src), fmt.Sprintf("script-format.md example %d", i+1)); err != nil {
			t.Error(err)
		}
	}
	if n == 0 {
		t.Error("no examples found")
	}
}
