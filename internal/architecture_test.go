// Package internal_test enforces the dependency rules of ARCHITECTURE.md on the real import
// graph, as `go list` reports it. A rule broken here is a design change: change the design page
// first.
package internal_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/reinhq/rein"

// graph maps each package of the module to its transitive (non-test) dependencies, and direct
// imports to its direct ones.
type graph struct {
	deps    map[string][]string
	imports map[string][]string
}

func load(t *testing.T) graph {
	t.Helper()
	g := graph{deps: map[string][]string{}, imports: map[string][]string{}}
	for _, q := range []struct {
		format string
		into   map[string][]string
	}{
		{`{{.ImportPath}} {{join .Deps " "}}`, g.deps},
		{`{{.ImportPath}} {{join .Imports " "}}`, g.imports},
	} {
		cmd := exec.Command("go", "list", "-f", q.format, module+"/...")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, stderr.String())
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 0 {
				q.into[fields[0]] = fields[1:]
			}
		}
	}
	return g
}

func rel(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }

func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

func TestDependencyRules(t *testing.T) {
	g := load(t)
	if len(g.deps) < 5 {
		t.Fatalf("go list found only %d packages; the rules would check nothing", len(g.deps))
	}
	type rule struct {
		name      string
		applies   func(pkg string) bool
		forbidden func(dep string) bool
		direct    bool // check direct imports only
	}
	adapters := []string{"internal/llm/anthropic", "internal/llm/openai", "internal/llm/openaicompat", "internal/llm/script"}
	isAdapter := func(p string) bool {
		for _, a := range adapters {
			if under(rel(p), a) {
				return true
			}
		}
		return false
	}
	rules := []rule{
		{"kernel talks to no network, terminal, workflow engine or concrete adapter",
			func(p string) bool { return under(rel(p), "internal/kernel") },
			func(d string) bool {
				return d == "net/http" || d == "net" || under(d, "golang.org/x/term") || under(d, "go.temporal.io") ||
					under(d, "charm.land") || isAdapter(d) || under(rel(d), "internal/tool/shell") ||
					under(rel(d), "internal/system") || under(rel(d), "internal/cli")
			}, false},
		{"ledger imports no LLM, tool, kernel, session or UI package",
			func(p string) bool { return under(rel(p), "internal/ledger") },
			func(d string) bool {
				for _, f := range []string{"internal/llm", "internal/tool", "internal/kernel", "internal/session", "internal/tui", "internal/rpc"} {
					if under(rel(d), f) {
						return true
					}
				}
				return false
			}, false},
		{"llm adapters import no kernel, session or tool package",
			isAdapter,
			func(d string) bool {
				return under(rel(d), "internal/kernel") || under(rel(d), "internal/session") || under(rel(d), "internal/tool")
			}, false},
		{"llm itself imports no adapter",
			func(p string) bool { return rel(p) == "internal/llm" },
			isAdapter, false},
		{"only cli imports system",
			func(p string) bool { return !under(rel(p), "internal/cli") && !under(rel(p), "internal/system") },
			func(d string) bool { return under(rel(d), "internal/system") }, true},
		{"only a worker binary links Temporal",
			func(p string) bool { return !under(rel(p), "cmd/rein-worker") },
			func(d string) bool { return under(d, "go.temporal.io") }, false},
	}
	for _, r := range rules {
		checked := 0
		for pkg := range g.deps {
			if !r.applies(pkg) {
				continue
			}
			checked++
			list := g.deps[pkg]
			if r.direct {
				list = g.imports[pkg]
			}
			for _, d := range list {
				if r.forbidden(d) {
					t.Errorf("%s: %s imports %s", r.name, rel(pkg), d)
				}
			}
		}
		t.Logf("%s: %d packages checked", r.name, checked)
	}
}
