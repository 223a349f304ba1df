package system

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

type namedTool string

func (n namedTool) Spec() tool.Spec { return tool.Spec{Name: string(n)} }
func (n namedTool) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.TextResult(""), nil
}

// TestReadScopeGuard checks the scope's verdicts on real-path arguments, as the tools pass
// them: an allowlist admits exactly its files, a deny path covers what is below it whatever
// the case, a hard-linked file is refused, and what the scope admits still goes to the
// permission rules.
func TestReadScopeGuard(t *testing.T) {
	next := denyAll{}
	only, err := newScopeGuard(agentspec.ReadScope{Name: "the pack", Only: []string{"AGENTS.md", ".rein/runs/r1/spec.md"}}, next)
	if err != nil {
		t.Fatal(err)
	}
	deny, err := newScopeGuard(agentspec.ReadScope{Name: "the repository", Deny: []string{".rein"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g     tool.Guard
		rel   string
		links uint64
		code  refusal.Code
	}{
		{only, ".rein/runs/r1/spec.md", 1, "next"},
		{only, "AGENTS.md", 0, "next"},
		{only, ".rein/runs/r1", 0, CodeReadOutOfScope},
		{only, ".", 0, CodeReadOutOfScope},
		{only, "agents.md", 1, CodeReadOutOfScope},
		{only, "AGENTS.md", 2, pathrule.CodeHardLinked},
		{deny, ".rein", 0, CodeReadOutOfScope},
		{deny, ".REIN/profile.yaml", 1, CodeReadOutOfScope},
		{deny, ".reinx/a", 1, ""},
		{deny, "src/.rein", 1, ""},
		{deny, "src/a.go", 2, pathrule.CodeHardLinked},
	} {
		err := c.g.Read(c.rel, true, c.links)
		got, _ := refusal.CodeOf(err)
		if got != c.code || (c.code == CodeReadOutOfScope && !strings.Contains(err.Error(), "the ")) {
			t.Errorf("Read(%q, links %d) = %v, want code %q", c.rel, c.links, err, c.code)
		}
	}
	if err := only.Write("x", true); !errors.Is(err, errNext) {
		t.Errorf("Write = %v, want the permission rules' verdict", err)
	}
}

// TestReadScopeRefusesWhatCannotHold: a scope path that is not clean and workspace-relative,
// or a scope on a tool set with bash, is a configuration error.
func TestReadScopeRefusesWhatCannotHold(t *testing.T) {
	for _, p := range []string{"", ".", "/etc/passwd", "../x", "a/../b", "a//b", `a\b`} {
		if _, err := newScopeGuard(agentspec.ReadScope{Only: []string{p}}, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("Only %q: %v", p, err)
		}
		if _, err := newScopeGuard(agentspec.ReadScope{Deny: []string{p}}, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("Deny %q: %v", p, err)
		}
	}
	set, err := tool.New(namedTool("read"), namedTool("bash"))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkScope(agentspec.ReadScope{Name: "the pack", Only: []string{"a"}}, set); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "bash") {
		t.Errorf("scope with bash: %v", err)
	}
	if err := checkScope(agentspec.ReadScope{}, set); err != nil {
		t.Errorf("no scope with bash: %v", err)
	}
}

var errNext = &refusal.Error{Code: "next", Message: "the permission rules"}

type denyAll struct{}

func (denyAll) Read(string, bool, uint64) error { return errNext }
func (denyAll) Write(string, bool) error        { return errNext }
