package worktree_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/worktree"
)

// dependent creates ticket id's worktree from its start, with the branch at the base.
func (p *project) dependent(id string, deps ...worktree.Dep) *worktree.Worktree {
	p.t.Helper()
	start, err := p.repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: id, Base: p.base, Deps: deps})
	if err != nil {
		p.t.Fatal(err)
	}
	w, err := p.repo.CreateAt(ctx, filepath.Join(p.home, id), delivery, p.base, start)
	if err != nil {
		p.t.Fatal(err)
	}
	if w.Base != start {
		p.t.Fatalf("worktree base %s, want the start %s", w.Base, start)
	}
	return w
}

// TestDependentTicketStartsFromItsDependency: t2 depends on t1: its worktree starts at t1's
// frozen commit (t1's file is there), its candidate's diff is only its own change, and
// integrating t1 then t2 is clean and puts each commit on the branch once.
func TestDependentTicketStartsFromItsDependency(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	if s, err := p.repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t1", Base: p.base}); err != nil || s != p.base {
		t.Fatalf("Start without dependencies = %s, %v; want the base", s, err)
	}
	w1 := p.ticket("t1", delivery, p.base)
	f1 := p.freeze(w1, "t1", map[string]string{"lib.go": "package lib\n\nfunc A() int { return 1 }\n"})
	w2 := p.dependent("t2", worktree.Dep{Ticket: "t1", Commit: f1.Head})
	if w2.Base != f1.Head {
		t.Fatalf("t2 starts at %s, want t1's commit %s", w2.Base, f1.Head)
	}
	if got := read(t, filepath.Join(w2.Dir, "lib.go")); !strings.Contains(got, "return 1") {
		t.Fatalf("t2's worktree lacks t1's lib.go: %q", got)
	}
	f2 := p.freeze(w2, "t2", map[string]string{"lib_test.go": "package lib\n\nvar _ = A()\n"})
	if !slices.Equal(f2.Files, []string{"lib_test.go"}) || f2.Base != f1.Head || f2.Parent != f1.Head {
		t.Fatalf("t2's candidate = %+v, want only lib_test.go from t1's commit", f2)
	}
	diff, err := w2.Diff(ctx, f2.Base, f2.Head)
	if err != nil || strings.Contains(string(diff), "lib.go") || !strings.Contains(string(diff), "b/lib_test.go") {
		t.Fatalf("t2's diff (%v):\n%s", err, diff)
	}
	if d, err := p.repo.DiffDigest(ctx, f2.Base, f2.Head); err != nil || d != f2.DiffDigest {
		t.Fatalf("DiffDigest = %s, %v; want %s", d, err, f2.DiffDigest)
	}
	other := p.freeze(p.ticket("t9", delivery, p.base), "t9", map[string]string{"z.txt": "z\n"})
	steps := []worktree.Step{{Ticket: "t1", Commit: f1.Head, Candidate: "sha256:c1"}, {Ticket: "t2", Commit: f2.Head, Candidate: "sha256:c2"}}
	in, err := p.repo.Integrate(ctx, "run-1", delivery, p.base, steps)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Merges) != 2 || in.Merges[0].Into == "" || in.Merges[1].Into != in.Head {
		t.Fatalf("Integration = %+v", in)
	}
	if parents := p.run("log", "-1", "--format=%P", in.Head); parents != in.Merges[0].Into+" "+f2.Head {
		t.Errorf("t2's merge parents = %s", parents)
	}
	// Each candidate commit is on the branch once; nothing else than the two merges was made.
	if n := p.run("rev-list", "--count", in.Head, "^"+p.base); n != "4" {
		t.Errorf("%s commits over the base, want 4 (two candidates, two merges)", n)
	}
	if files := p.run("ls-tree", "-r", "--name-only", in.Head); files != ".gitignore\na.txt\nlib.go\nlib_test.go" {
		t.Errorf("tree = %q", files)
	}
	// Reusing t2's worktree after a crash keeps its start; opening it from another start fails.
	if _, err := p.repo.Open(ctx, w2.Dir, f1.Head); err != nil {
		t.Fatal(err)
	}
	if _, err := p.repo.CreateAt(ctx, w2.Dir, delivery, p.base, f1.Head); err == nil {
		t.Fatal("CreateAt reused a worktree that moved on from its start")
	} else {
		wantCode(t, err, worktree.CodeHeadMismatch)
	}
	e := wantCode(t, func() error { _, err := p.repo.Open(ctx, w2.Dir, other.Head); return err }(), worktree.CodeStartMismatch)
	if e.Want != other.Head || e.Got != f2.Head {
		t.Errorf("start mismatch = %+v", e)
	}
}

// TestStartMergesSeveralDependencies: t3 depends on t1 and t2: it starts at one merge commit
// of both, by rein, the same commit whatever the order or the moment, whose tree has both
// files; t3's diff is its own; integrating t1, t2, t3 is clean.
func TestStartMergesSeveralDependencies(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	f1 := p.freeze(p.ticket("t1", delivery, p.base), "t1", map[string]string{"one.txt": "1\n"})
	f2 := p.freeze(p.ticket("t2", delivery, p.base), "t2", map[string]string{"two.txt": "2\n", "a.txt": "one\ntwo\nthree\nfour\n"})
	refs := p.run("for-each-ref")
	deps := []worktree.Dep{{Ticket: "t2", Commit: f2.Head}, {Ticket: "t1", Commit: f1.Head}}
	start, err := p.repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t3", Base: p.base, Deps: deps})
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t3", Base: p.base, Deps: []worktree.Dep{deps[1], deps[0]}})
	if err != nil || again != start {
		t.Fatalf("Start again = %s, %v; want the same commit %s", again, err, start)
	}
	if got := p.run("for-each-ref"); got != refs {
		t.Errorf("Start changed refs:\n%s", got)
	}
	if parents := p.run("log", "-1", "--format=%P", start); parents != f1.Head+" "+f2.Head {
		t.Errorf("start parents = %s, want t1's and t2's commits", parents)
	}
	if msg := p.run("log", "-1", "--format=%an <%ae>|%cn|%B", start); !strings.HasPrefix(msg, "rein <rein@rein.invalid>|rein|rein: start ticket t3 of run run-1 from t1, t2") ||
		!strings.Contains(msg, "Rein-Depends: t1 "+f1.Head) || !strings.Contains(msg, "Rein-Depends: t2 "+f2.Head) {
		t.Errorf("start message = %q", msg)
	}
	w3 := p.dependent("t3", deps...)
	for name, want := range map[string]string{"one.txt": "1\n", "two.txt": "2\n", "a.txt": "one\ntwo\nthree\nfour\n"} {
		if got := read(t, filepath.Join(w3.Dir, name)); got != want {
			t.Errorf("t3's %s = %q, want %q", name, got, want)
		}
	}
	f3 := p.freeze(w3, "t3", map[string]string{"three.txt": "3\n"})
	if !slices.Equal(f3.Files, []string{"three.txt"}) {
		t.Fatalf("t3's files = %v", f3.Files)
	}
	steps := []worktree.Step{{Ticket: "t1", Commit: f1.Head, Candidate: "sha256:c1"}, {Ticket: "t2", Commit: f2.Head, Candidate: "sha256:c2"}, {Ticket: "t3", Commit: f3.Head, Candidate: "sha256:c3"}}
	in, err := p.repo.Integrate(ctx, "run-1", delivery, p.base, steps)
	if err != nil {
		t.Fatal(err)
	}
	if files := p.run("ls-tree", "-r", "--name-only", in.Head); files != ".gitignore\na.txt\none.txt\nthree.txt\ntwo.txt" {
		t.Errorf("tree = %q", files)
	}
	// A dependency already in another's history adds nothing: t4 on t3 and t1 starts at t3's.
	if s, err := p.repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t4", Base: p.base, Deps: []worktree.Dep{{Ticket: "t1", Commit: f1.Head}, {Ticket: "t3", Commit: f3.Head}}}); err != nil || s != f3.Head {
		t.Fatalf("Start(t1, t3) = %s, %v; want t3's commit", s, err)
	}
}

// TestStartDependencyConflict: dependencies that do not merge are a refusal naming the two
// tickets and the files; nothing changes.
func TestStartDependencyConflict(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	f1 := p.freeze(p.ticket("t1", delivery, p.base), "t1", map[string]string{"x.txt": "from t1\n", "one.txt": "1\n"})
	f2 := p.freeze(p.ticket("t2", delivery, p.base), "t2", map[string]string{"two.txt": "2\n"})
	f3 := p.freeze(p.ticket("t3", delivery, p.base), "t3", map[string]string{"x.txt": "from t3\n"})
	refs := p.run("for-each-ref")
	_, err := p.repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t4", Base: p.base,
		Deps: []worktree.Dep{{Ticket: "t1", Commit: f1.Head}, {Ticket: "t2", Commit: f2.Head}, {Ticket: "t3", Commit: f3.Head}}})
	e := wantCode(t, err, worktree.CodeDependencyConflict)
	if !slices.Equal(e.Tickets, []string{"t1", "t3"}) || !slices.Equal(e.Files, []string{"x.txt"}) || e.Dir != "t4" ||
		!strings.Contains(err.Error(), "t1 and t3") {
		t.Fatalf("conflict = %+v", e)
	}
	if got := p.run("for-each-ref"); got != refs {
		t.Errorf("a conflicting Start changed refs:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(p.home, "t4")); !os.IsNotExist(err) {
		t.Errorf("a worktree was made: %v", err)
	}
}

// TestStartRefusesForeignCommits: a dependency, or a start, that does not descend from the
// base is refused.
func TestStartRefusesForeignCommits(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	f1 := p.freeze(p.ticket("t1", delivery, p.base), "t1", map[string]string{"one.txt": "1\n"})
	orphan := p.run("-c", "user.name=t", "-c", "user.email=t@e", "commit-tree", "-m", "orphan", p.run("rev-parse", p.base+"^{tree}"))
	_, err := p.repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t2", Base: p.base, Deps: []worktree.Dep{{Ticket: "t1", Commit: f1.Head}, {Ticket: "t0", Commit: orphan}}})
	wantCode(t, err, worktree.CodeStartMismatch)
	_, err = p.repo.CreateAt(ctx, filepath.Join(p.home, "t2"), delivery, p.base, orphan)
	wantCode(t, err, worktree.CodeStartMismatch)
}
