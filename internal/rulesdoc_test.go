package internal_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated rules section of docs/ARCHITECTURE.md")

// The rules section of docs/ARCHITECTURE.md lies between these lines and is generated from rules.
const (
	docPath   = "../docs/ARCHITECTURE.md"
	beginMark = "<!-- BEGIN generated from internal/architecture_test.go: go test ./internal/ -run ArchitectureDoc -update -->"
	endMark   = "<!-- END generated -->"
)

// renderRules writes the rules as a markdown list, one item a rule.
func renderRules(rules []rule) string {
	var b strings.Builder
	for _, r := range rules {
		fmt.Fprintf(&b, "- %s", codeList(r.pkgs))
		if len(r.except) > 0 {
			fmt.Fprintf(&b, " except %s", codeList(r.except))
		}
		if r.direct {
			b.WriteString(" must not import directly ")
		} else {
			b.WriteString(" must not depend on, directly or through other packages, ")
		}
		b.WriteString(codeList(r.forbid))
		for _, a := range r.allow {
			fmt.Fprintf(&b, "; allowed: `%s` (%s)", a.pattern, a.reason)
		}
		fmt.Fprintf(&b, ". %s", r.reason)
		if r.pending != "" {
			fmt.Fprintf(&b, " *Pending %s: the test reports a violation without failing until that change lands.*", r.pending)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func codeList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "`" + s + "`"
	}
	return strings.Join(q, ", ")
}

// TestArchitectureDoc checks that docs/ARCHITECTURE.md lists exactly the rules the dependency
// test enforces, with their reasons; -update rewrites the section.
func TestArchitectureDoc(t *testing.T) {
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, beginMark+"\n"), strings.Index(doc, endMark)
	if i < 0 || j < i+len(beginMark)+1 {
		t.Fatalf("%s has no generated rules section: put the lines\n%s\n%s\nin it and run go test ./internal/ -run ArchitectureDoc -update", docPath, beginMark, endMark)
	}
	start := i + len(beginMark) + 1
	got, want := doc[start:j], renderRules(rules)
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(doc[:start]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the rules section of %s", docPath)
		return
	}
	t.Errorf("the rules section of %s is not the rules of internal/architecture_test.go; run go test ./internal/ -run ArchitectureDoc -update\n--- in the doc:\n%s--- the rules:\n%s", docPath, got, want)
}
