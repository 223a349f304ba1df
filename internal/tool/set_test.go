package tool

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func named(n string) Tool { return fakeTool{spec: Spec{Name: n}} }

func TestSet(t *testing.T) {
	s, err := New(named("read"), named("write"), named("edit"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"read", "write", "edit"}, s.Names()); diff != "" {
		t.Error(diff)
	}
	if tl, ok := s.Get("write"); !ok || tl.Spec().Name != "write" {
		t.Error("Get(write)")
	}
	if _, ok := s.Get("bash"); ok {
		t.Error("Get(bash) found")
	}
	if got := len(s.Specs()); got != 3 {
		t.Errorf("Specs: %d", got)
	}
	sub, err := s.Select([]string{"edit", "read", "edit"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"edit", "read"}, sub.Names()); diff != "" {
		t.Error(diff)
	}
	_, err = s.Select([]string{"read", "bash", "grep"})
	if !errors.Is(err, ErrUnknownTool) || err.Error() != `unknown tool: "bash", "grep" (known tools: read, write, edit)` {
		t.Errorf("Select unknown: %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	for name, tools := range map[string][]Tool{
		"duplicate": {named("read"), named("read")},
		"empty":     {named("")},
		"nil":       {nil},
	} {
		if _, err := New(tools...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
