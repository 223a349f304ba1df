package policy

import (
	"context"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/tool"

	"github.com/reinhq/rein/internal/refusal"
)

type fakeTool string

func (f fakeTool) Spec() tool.Spec { return tool.Spec{Name: string(f)} }
func (f fakeTool) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.TextResult(string(f)), nil
}

func fullSet(t *testing.T) *tool.Set {
	t.Helper()
	var tools []tool.Tool
	for _, n := range []string{"read", "bash", "edit", "write", "grep", "find", "ls", ToolRunCommand, "submit_review", "submit_plan", "webfetch"} {
		tools = append(tools, fakeTool(n))
	}
	s, err := tool.New(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoleSurfaces(t *testing.T) {
	set := fullSet(t)
	cases := []struct {
		role     Role
		contract []string
		want     []string
	}{
		{RoleDefault, nil, set.Names()},
		{RoleReview, []string{"submit_review"}, []string{"read", "grep", "find", "ls", "submit_review"}},
		{RoleReview, nil, []string{"read", "grep", "find", "ls"}},
		{RoleWorkflow, []string{"submit_plan"}, []string{"read", "grep", "find", "ls", "submit_plan"}},
		{RoleWriter, nil, []string{"read", "edit", "write", "grep", "find", "ls", ToolRunCommand}},
	}
	for _, c := range cases {
		s, err := SurfaceFor(c.role, c.contract...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Filter(set)
		if err != nil {
			t.Fatal(err)
		}
		// Filter keeps the set's order.
		want := slices.Clone(c.want)
		slices.SortFunc(want, func(a, b string) int { return slices.Index(set.Names(), a) - slices.Index(set.Names(), b) })
		if !slices.Equal(got.Names(), want) {
			t.Errorf("%s: Filter = %v, want %v", c.role, got.Names(), want)
		}
		for _, n := range set.Names() {
			if _, seen := got.Get(n); seen != s.Allows(n) {
				t.Errorf("%s: tool %s seen=%v but Allows=%v", c.role, n, seen, s.Allows(n))
			}
		}
		if s.String() == "" {
			t.Error("empty String")
		}
	}
	// No role but default ever sees bash.
	for _, r := range []Role{RoleWorkflow, RoleWriter, RoleReview} {
		s, _ := SurfaceFor(r, "submit")
		if s.Allows("bash") {
			t.Errorf("%s sees bash", r)
		}
		if _, err := SurfaceFor(r, "bash"); err == nil {
			t.Errorf("%s accepted bash as a contract tool", r)
		}
	}
	if _, err := SurfaceFor("admin"); !isCode(err, CodeUnknownRole) {
		t.Errorf("unknown role: %v", err)
	}
	// A filtered set of a small set lacks the absent tools without error.
	small, _ := tool.New(fakeTool("read"))
	s, _ := SurfaceFor(RoleWriter)
	if got, err := s.Filter(small); err != nil || !slices.Equal(got.Names(), []string{"read"}) {
		t.Errorf("Filter(small) = %v, %v", got, err)
	}
}

func isCode(err error, c refusal.Code) bool {
	got, ok := refusal.CodeOf(err)
	return ok && got == c
}

// TestReviewerMutationAttempts: every tool a reviewer might try to change things with is
// refused with CodeReviewMutation.
func TestReviewerMutationAttempts(t *testing.T) {
	s, err := SurfaceFor(RoleReview, "submit_review")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"write", "edit", "bash", ToolRunCommand, "Write", "EDIT", "write ", "mcp_fs_write", "apply_patch", "delete", "", "read\x00"} {
		err := s.Check(name)
		if !isCode(err, CodeReviewMutation) {
			t.Errorf("review Check(%q) = %v, want %s", name, err, CodeReviewMutation)
		}
	}
	for _, name := range []string{"read", "grep", "find", "ls", "submit_review"} {
		if err := s.Check(name); err != nil {
			t.Errorf("review Check(%q) = %v", name, err)
		}
	}
	w, _ := SurfaceFor(RoleWriter)
	if err := w.Check("bash"); !isCode(err, CodeToolNotInRole) {
		t.Errorf("writer bash: %v", err)
	}
	d, _ := SurfaceFor(RoleDefault)
	if err := d.Check("anything"); err != nil {
		t.Errorf("default: %v", err)
	}
}
