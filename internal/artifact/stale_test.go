package artifact_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/artifact"
)

// v returns a distinct digest per name and version, e.g. v("spec", 1).
func v(name string, n int) artifact.Digest {
	return artifact.Sum([]byte(name + "#" + string(rune('0'+n))))
}

func in(id string, n int) artifact.Input { return artifact.Input{ID: id, Digest: v(id, n)} }

// current maps every id to version 1, then applies the overrides (version 0 deletes).
func current(ids []string, over map[string]int) map[string]artifact.Digest {
	m := map[string]artifact.Digest{}
	for _, id := range ids {
		m[id] = v(id, 1)
	}
	for id, n := range over {
		if n == 0 {
			delete(m, id)
			continue
		}
		m[id] = v(id, n)
	}
	return m
}

func staleIDs(r artifact.Report) []string {
	var out []string
	for _, s := range r.Stale {
		out = append(out, s.ID)
	}
	return out
}

func TestStaleChain(t *testing.T) {
	// snapshot (external) → research → spec → plan → ticket
	g := artifact.Graph{Nodes: []artifact.Node{
		{ID: "ticket", Digest: v("ticket", 1), Inputs: []artifact.Input{in("plan", 1)}},
		{ID: "plan", Digest: v("plan", 1), Inputs: []artifact.Input{in("spec", 1)}},
		{ID: "spec", Digest: v("spec", 1), Inputs: []artifact.Input{in("research", 1)}},
		{ID: "research", Digest: v("research", 1), Inputs: []artifact.Input{in("snapshot", 1)}},
	}}
	ids := []string{"snapshot", "research", "spec", "plan", "ticket"}

	rep, err := g.Check(current(ids, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stale) != 0 || len(rep.Changed) != 0 {
		t.Fatalf("nothing changed, report %+v", rep)
	}

	rep, err = g.Check(current(ids, map[string]int{"spec": 2}))
	if err != nil {
		t.Fatal(err)
	}
	want := artifact.Report{
		Changed: []artifact.Change{{ID: "spec", Recorded: v("spec", 1), Current: v("spec", 2)}},
		Stale: []artifact.Staleness{
			{ID: "plan", Inputs: []string{"spec"}, Causes: []string{"spec"}},
			{ID: "ticket", Inputs: []string{"plan"}, Causes: []string{"spec"}},
		},
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("spec changed (-want +got):\n%s", diff)
	}

	// An external input change reaches the end of the chain.
	rep, _ = g.Check(current(ids, map[string]int{"snapshot": 2}))
	if got := staleIDs(rep); !slices.Equal(got, []string{"plan", "research", "spec", "ticket"}) {
		t.Errorf("snapshot changed: stale %v", got)
	}
	if rep.Stale[3].Causes[0] != "snapshot" || len(rep.Changed) != 0 {
		t.Errorf("report %+v", rep)
	}

	// A deleted input counts as changed.
	rep, _ = g.Check(current(ids, map[string]int{"research": 0}))
	if got := staleIDs(rep); !slices.Equal(got, []string{"plan", "spec", "ticket"}) {
		t.Errorf("research deleted: stale %v", got)
	}
	if len(rep.Changed) != 1 || rep.Changed[0].ID != "research" || rep.Changed[0].Current != "" {
		t.Errorf("research deleted: changed %+v", rep.Changed)
	}

	// Regenerating plan from the new spec clears plan; ticket stays stale (made from the old
	// plan).
	g.Nodes[1] = artifact.Node{ID: "plan", Digest: v("plan", 2), Inputs: []artifact.Input{in("spec", 2)}}
	rep, _ = g.Check(current(ids, map[string]int{"spec": 2, "plan": 2}))
	want = artifact.Report{
		Changed: []artifact.Change{{ID: "spec", Recorded: v("spec", 1), Current: v("spec", 2)}},
		Stale:   []artifact.Staleness{{ID: "ticket", Inputs: []string{"plan"}, Causes: []string{"plan"}}},
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("plan regenerated (-want +got):\n%s", diff)
	}
}

func TestStaleDiamond(t *testing.T) {
	//      a
	//     / \
	//    b   c
	//     \ /
	//      d ── e
	nodes := []artifact.Node{
		{ID: "a", Digest: v("a", 1)},
		{ID: "b", Digest: v("b", 1), Inputs: []artifact.Input{in("a", 1)}},
		{ID: "c", Digest: v("c", 1), Inputs: []artifact.Input{in("a", 1)}},
		{ID: "d", Digest: v("d", 1), Inputs: []artifact.Input{in("b", 1), in("c", 1)}},
		{ID: "e", Digest: v("e", 1), Inputs: []artifact.Input{in("d", 1), in("x", 1)}},
	}
	ids := []string{"a", "b", "c", "d", "e", "x"}
	want := []artifact.Staleness{
		{ID: "b", Inputs: []string{"a"}, Causes: []string{"a"}},
		{ID: "c", Inputs: []string{"a"}, Causes: []string{"a"}},
		{ID: "d", Inputs: []string{"b", "c"}, Causes: []string{"a"}},
		{ID: "e", Inputs: []string{"d", "x"}, Causes: []string{"a", "x"}},
	}
	// The result does not depend on the order of the nodes.
	for perm := range 5 {
		ns := slices.Clone(nodes)
		for i := range ns {
			j := (i*7 + perm*3) % len(ns)
			ns[i], ns[j] = ns[j], ns[i]
		}
		rep, err := artifact.Graph{Nodes: ns}.Check(current(ids, map[string]int{"a": 2, "x": 2}))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, rep.Stale); diff != "" {
			t.Errorf("permutation %d (-want +got):\n%s", perm, diff)
		}
		if !rep.IsStale("d") || rep.IsStale("a") || rep.IsStale("x") {
			t.Errorf("IsStale wrong: %+v", rep.Stale)
		}
	}
	// Only one side of the diamond changed: d is stale through b alone.
	rep, _ := artifact.Graph{Nodes: nodes}.Check(current(ids, map[string]int{"b": 2}))
	want = []artifact.Staleness{
		{ID: "d", Inputs: []string{"b"}, Causes: []string{"b"}},
		{ID: "e", Inputs: []string{"d"}, Causes: []string{"b"}},
	}
	if diff := cmp.Diff(want, rep.Stale); diff != "" {
		t.Errorf("b changed (-want +got):\n%s", diff)
	}
}

func TestStaleApprovals(t *testing.T) {
	g := artifact.Graph{
		Nodes: []artifact.Node{
			{ID: "spec", Digest: v("spec", 1), Inputs: []artifact.Input{in("research", 1)}},
			{ID: "plan", Digest: v("plan", 1), Inputs: []artifact.Input{in("spec", 1)}},
			{ID: "research", Digest: v("research", 1)},
		},
		Approvals: []artifact.Approval{
			{ID: "spec-gate", Artifact: "spec", Digest: v("spec", 1)},
			{ID: "plan-gate", Artifact: "plan", Digest: v("plan", 1)},
			{ID: "profile", Artifact: "profile", Digest: v("profile", 1)},
		},
	}
	ids := []string{"research", "spec", "plan", "profile"}
	status := func(rep artifact.Report) map[string]artifact.ApprovalStatus {
		m := map[string]artifact.ApprovalStatus{}
		for _, a := range rep.Approvals {
			m[a.ID] = a.Status
		}
		return m
	}

	rep, err := g.Check(current(ids, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Invalid()) != 0 {
		t.Errorf("nothing changed, invalid: %+v", rep.Invalid())
	}
	// Sorted by approval id.
	if rep.Approvals[0].ID != "plan-gate" || rep.Approvals[2].ID != "spec-gate" {
		t.Errorf("approval order: %+v", rep.Approvals)
	}

	// The approved spec was edited: its approval is changed, the plan approval stale.
	rep, _ = g.Check(current(ids, map[string]int{"spec": 2}))
	want := map[string]artifact.ApprovalStatus{"spec-gate": artifact.ApprovalChanged, "plan-gate": artifact.ApprovalStale, "profile": artifact.ApprovalValid}
	if diff := cmp.Diff(want, status(rep)); diff != "" {
		t.Errorf("spec edited (-want +got):\n%s", diff)
	}
	if rep.Approvals[2].Current != v("spec", 2) {
		t.Errorf("current digest in approval state = %s", rep.Approvals[2].Current)
	}

	// research changed: both approvals' artifacts are stale though their bytes are unchanged.
	rep, _ = g.Check(current(ids, map[string]int{"research": 2}))
	want = map[string]artifact.ApprovalStatus{"spec-gate": artifact.ApprovalStale, "plan-gate": artifact.ApprovalStale, "profile": artifact.ApprovalValid}
	if diff := cmp.Diff(want, status(rep)); diff != "" {
		t.Errorf("research changed (-want +got):\n%s", diff)
	}

	// The profile (not a node) was edited, then deleted.
	for _, n := range []int{2, 0} {
		rep, _ = g.Check(current(ids, map[string]int{"profile": n}))
		want = map[string]artifact.ApprovalStatus{"spec-gate": artifact.ApprovalValid, "plan-gate": artifact.ApprovalValid, "profile": artifact.ApprovalChanged}
		if diff := cmp.Diff(want, status(rep)); diff != "" {
			t.Errorf("profile version %d (-want +got):\n%s", n, diff)
		}
	}
}

func TestStaleInvalidGraph(t *testing.T) {
	ok := artifact.Node{ID: "a", Digest: v("a", 1)}
	for _, tc := range []struct {
		name string
		g    artifact.Graph
	}{
		{"empty id", artifact.Graph{Nodes: []artifact.Node{{Digest: v("a", 1)}}}},
		{"duplicate id", artifact.Graph{Nodes: []artifact.Node{ok, ok}}},
		{"bad digest", artifact.Graph{Nodes: []artifact.Node{{ID: "a", Digest: "sha256:1"}}}},
		{"bad input digest", artifact.Graph{Nodes: []artifact.Node{{ID: "b", Digest: v("b", 1), Inputs: []artifact.Input{{ID: "a"}}}}}},
		{"self input", artifact.Graph{Nodes: []artifact.Node{{ID: "a", Digest: v("a", 1), Inputs: []artifact.Input{in("a", 1)}}}}},
		{"duplicate input", artifact.Graph{Nodes: []artifact.Node{ok, {ID: "b", Digest: v("b", 1), Inputs: []artifact.Input{in("a", 1), in("a", 2)}}}}},
		{"cycle", artifact.Graph{Nodes: []artifact.Node{
			{ID: "a", Digest: v("a", 1), Inputs: []artifact.Input{in("c", 1)}},
			{ID: "b", Digest: v("b", 1), Inputs: []artifact.Input{in("a", 1)}},
			{ID: "c", Digest: v("c", 1), Inputs: []artifact.Input{in("b", 1)}},
		}}},
		{"approval without artifact", artifact.Graph{Approvals: []artifact.Approval{{ID: "g", Digest: v("a", 1)}}}},
		{"approval bad digest", artifact.Graph{Approvals: []artifact.Approval{{ID: "g", Artifact: "a"}}}},
	} {
		if _, err := tc.g.Check(nil); !errors.Is(err, artifact.ErrInvalidGraph) {
			t.Errorf("%s: %v, want ErrInvalidGraph", tc.name, err)
		}
	}
	_, err := artifact.Graph{Nodes: []artifact.Node{ok}}.Check(map[string]artifact.Digest{"a": "nope"})
	if !errors.Is(err, artifact.ErrInvalidDigest) {
		t.Errorf("bad current digest: %v", err)
	}
}
