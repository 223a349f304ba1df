package internal_test

import (
	"strings"
	"testing"
)

func TestRulesPatterns(t *testing.T) {
	valid := []struct {
		in   string
		path string
		tree bool
	}{
		{"./internal/kernel", module + "/internal/kernel", false},
		{"./internal/llm/...", module + "/internal/llm", true},
		{"./...", module, true},
		{".", module, false},
		{"net/http", "net/http", false},
		{"net", "net", false},
		{"go.temporal.io/...", "go.temporal.io", true},
		{"google.golang.org/grpc/...", "google.golang.org/grpc", true},
	}
	for _, c := range valid {
		p, err := parsePattern(c.in)
		if err != nil {
			t.Errorf("parsePattern(%q): %v", c.in, err)
			continue
		}
		if p.path != c.path || p.tree != c.tree {
			t.Errorf("parsePattern(%q) = path %q tree %v, want %q %v", c.in, p.path, p.tree, c.path, c.tree)
		}
	}
	for _, in := range []string{
		"", " net", "net\\http", "...", "/...", "./", "./internal/", "./internal//kernel",
		"./internal/../cli", "./a/./b", "./internal/...x", "./internal/.../kernel", "net/...http",
		"internal/kernel", "cmd/rein", "bench/mock/...", module + "/internal/kernel", module + "/...",
	} {
		if p, err := parsePattern(in); err == nil {
			t.Errorf("parsePattern(%q) = %+v, want an error", in, p)
		}
	}
}

func TestRulesMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"./internal/llm/...", module + "/internal/llm", true},
		{"./internal/llm/...", module + "/internal/llm/openai", true},
		{"./internal/llm/...", module + "/internal/llm/openaicompat/oaisdk", true},
		{"./internal/llm/...", module + "/internal/llmx", false},
		{"./internal/llm", module + "/internal/llm/openai", false},
		{"./internal/llm", module + "/internal/llm", true},
		{"./...", module + "/cmd/rein", true},
		{"./...", "net/http", false},
		{"net", "net/http", false},
		{"net/http/...", "net/http/httptrace", true},
		{"mvdan.cc/sh/...", "mvdan.cc/sh/v3/syntax", true},
		{"mvdan.cc/sh/...", "mvdan.cc/shx", false},
	} {
		p, err := parsePattern(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.match(c.path); got != c.want {
			t.Errorf("%q matches %q = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// testGraph: a → b → ext.io/lib; llm; llm/one → a; llm/two; llm/llmtest → a.
func testGraph() graph {
	m := func(rel string) string { return module + "/" + rel }
	g := graph{imports: map[string][]string{
		m("a"):           {m("b")},
		m("b"):           {"ext.io/lib"},
		"ext.io/lib":     {"ext.io/lib/inner"},
		m("llm"):         nil,
		m("llm/one"):     {m("llm"), m("a")},
		m("llm/two"):     {m("llm")},
		m("llm/llmtest"): {m("llm"), m("a")},
	}, deps: map[string][]string{
		m("a"):           {m("b"), "ext.io/lib", "ext.io/lib/inner"},
		m("b"):           {"ext.io/lib", "ext.io/lib/inner"},
		m("llm"):         nil,
		m("llm/one"):     {m("llm"), m("a"), m("b"), "ext.io/lib", "ext.io/lib/inner"},
		m("llm/two"):     {m("llm")},
		m("llm/llmtest"): {m("llm"), m("a"), m("b"), "ext.io/lib", "ext.io/lib/inner"},
	}}
	return g
}

func TestRulesCheck(t *testing.T) {
	const why = "because"
	cases := []struct {
		name  string
		rule  rule
		fails []string // substrings of the failures, in order; none: no failure
		notes []string // substrings expected among the notes
	}{
		{"transitive violation shows the chain and the reason",
			rule{pkgs: []string{"./a"}, forbid: []string{"ext.io/..."}, reason: why},
			[]string{"a → b → ext.io/lib\n", "a → b → ext.io/lib → ext.io/lib/inner", "why: because"}, nil},
		{"direct only ignores what comes through another package",
			rule{pkgs: []string{"./a"}, forbid: []string{"ext.io/..."}, direct: true, reason: why}, nil, nil},
		{"direct violation",
			rule{pkgs: []string{"./b"}, forbid: []string{"ext.io/lib"}, direct: true, reason: why},
			[]string{"b → ext.io/lib"}, nil},
		{"holding rule",
			rule{pkgs: []string{"./llm/..."}, forbid: []string{"net"}, reason: why}, nil, nil},
		{"a package pattern that matches nothing fails",
			rule{pkgs: []string{"./gone/..."}, forbid: []string{"net"}, reason: why},
			[]string{`"./gone/..." matches no package`}, nil},
		{"one dead pattern among live ones fails",
			rule{pkgs: []string{"./a", "./gone"}, forbid: []string{"net"}, reason: why},
			[]string{`"./gone" matches no package`}, nil},
		{"except swallowing a pattern's packages fails",
			rule{pkgs: []string{"./llm"}, except: []string{"./llm/..."}, forbid: []string{"net"}, reason: why},
			[]string{`"./llm" matches no package`}, nil},
		{"a malformed forbidden pattern fails",
			rule{pkgs: []string{"./a"}, forbid: []string{"internal/b"}, reason: why},
			[]string{"malformed", `"internal/b"`}, nil},
		{"no reason fails",
			rule{pkgs: []string{"./a"}, forbid: []string{"net"}}, []string{"gives no reason"}, nil},
		{"nothing forbidden fails",
			rule{pkgs: []string{"./a"}, reason: why}, []string{"needs packages to bind and imports to forbid"}, nil},
		{"prefix rule binds every adapter, a new one too, but not the exceptions",
			rule{pkgs: []string{"./llm/..."}, except: []string{"./llm", "./llm/llmtest/..."}, forbid: []string{"./a/..."}, reason: why},
			[]string{"llm/one → a\n"}, nil},
		{"allow exempts one forbidden package",
			rule{pkgs: []string{"./llm/one"}, forbid: []string{"./llm/...", "./b"}, allow: []allowed{{"./llm", "types"}}, reason: why},
			[]string{"llm/one → a → b"}, nil},
		{"an allow nothing needs fails",
			rule{pkgs: []string{"./llm/two"}, forbid: []string{"./a/..."}, allow: []allowed{{"./a", "old"}}, reason: why},
			[]string{`allow "./a" is needed by no package`}, nil},
		{"an allow without a reason fails",
			rule{pkgs: []string{"./llm/two"}, forbid: []string{"./llm/..."}, allow: []allowed{{"./llm", ""}}, reason: why},
			[]string{`allow "./llm" gives no reason`}, nil},
		{"a pending rule logs its violation",
			rule{pkgs: []string{"./a"}, forbid: []string{"ext.io/lib"}, reason: why, pending: "#1"},
			nil, []string{"pending (#1), not yet enforced", "a → b → ext.io/lib"}},
		{"a pending rule that holds fails until the flag goes",
			rule{pkgs: []string{"./llm/two"}, forbid: []string{"ext.io/..."}, reason: why, pending: "#1"},
			[]string{`holds now: remove its pending "#1"`}, nil},
		{"a forbidden package of the module that does not exist is noted",
			rule{pkgs: []string{"./a"}, forbid: []string{"./future/..."}, reason: why},
			nil, []string{"forbidden ./future/... is no package of the module"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := check([]rule{c.rule}, testGraph())
			if len(c.fails) == 0 && len(rep.failures) > 0 {
				t.Errorf("failures %q, want none", rep.failures)
			}
			all := strings.Join(rep.failures, "\n")
			rest := all
			for _, f := range c.fails {
				i := strings.Index(rest, f)
				if i < 0 {
					t.Errorf("failures %q: want %q (in this order: %q)", all, f, c.fails)
					break
				}
				rest = rest[i+len(f):]
			}
			notes := strings.Join(rep.notes, "\n")
			for _, n := range c.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q: want %q", rep.notes, n)
				}
			}
		})
	}
}
