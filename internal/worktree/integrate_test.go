package worktree_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/worktree"
)

const delivery = "rein/run-1"

func TestIntegrateDependentTicketsInOrder(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	project := state(t, p.dir)
	// t1 adds a file; t2 depends on it: made from the branch once t1 is on it.
	w1 := p.ticket("t1", delivery, p.base)
	f1 := p.freeze(w1, "t1", map[string]string{"lib.go": "package lib\n\nfunc A() int { return 1 }\n"})
	in, err := p.repo.Integrate(ctx, "run-1", delivery, p.base, []worktree.Step{{Ticket: "t1", Commit: f1.Head, Candidate: "sha256:c1"}})
	if err != nil {
		t.Fatal(err)
	}
	h1 := in.Head
	if len(in.Merges) != 1 || in.Merges[0].Into != h1 || in.From != p.base {
		t.Fatalf("Integration = %+v", in)
	}
	w2 := p.ticket("t2", delivery, h1)
	f2 := p.freeze(w2, "t2", map[string]string{"lib.go": "package lib\n\nfunc A() int { return 2 }\n", "lib_test.go": "package lib\n"})
	w3 := p.ticket("t3", delivery, h1)
	f3 := p.freeze(w3, "t3", map[string]string{"a.txt": "one\ntwo\nthree\nfour\n"})
	steps := []worktree.Step{{Ticket: "t2", Commit: f2.Head, Candidate: "sha256:c2"}, {Ticket: "t3", Commit: f3.Head, Candidate: "sha256:c3"}}
	in, err = p.repo.Integrate(ctx, "run-1", delivery, h1, steps)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := p.repo.BranchHead(ctx, delivery)
	if in.Head != head || len(in.Merges) != 2 {
		t.Fatalf("Integration = %+v, branch at %s", in, head)
	}
	// The branch is a chain of merges: t2's onto h1, then t3's onto that.
	g := gitx.Runner{Dir: p.dir}
	if parents := p.runIn(g, "log", "-1", "--format=%P", in.Merges[0].Into); parents != h1+" "+f2.Head {
		t.Errorf("t2's merge parents = %s", parents)
	}
	if parents := p.runIn(g, "log", "-1", "--format=%P", head); parents != in.Merges[0].Into+" "+f3.Head {
		t.Errorf("t3's merge parents = %s", parents)
	}
	if msg := p.runIn(g, "log", "-1", "--format=%an|%B", head); !strings.HasPrefix(msg, "rein|rein: integrate ticket t3 of run run-1") || !strings.Contains(msg, "Rein-Candidate: sha256:c3") {
		t.Errorf("merge message = %q", msg)
	}
	files := p.runIn(g, "ls-tree", "-r", "--name-only", head)
	if want := ".gitignore\na.txt\nlib.go\nlib_test.go"; files != want {
		t.Errorf("tree = %q, want %q", files, want)
	}
	if got := p.runIn(g, "show", head+":lib.go"); !strings.Contains(got, "return 2") {
		t.Errorf("lib.go = %q", got)
	}
	// Integrating again (a crash after the branch moved) makes nothing.
	count := commitCount(t, g)
	again, err := p.repo.Integrate(ctx, "run-1", delivery, h1, steps)
	if err != nil || again.Head != head || again.Merges[0].Into != "" || commitCount(t, g) != count {
		t.Fatalf("again = %+v, %v", again, err)
	}
	if got := state(t, p.dir); got != project {
		t.Errorf("the project's checkout changed:\n%s\nwant\n%s", got, project)
	}
}

func TestConflictLeavesEverythingUnchanged(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	wx, wy := p.ticket("x", delivery, p.base), p.ticket("y", delivery, p.base)
	fx := p.freeze(wx, "x", map[string]string{"a.txt": "one\nX\nthree\n", "x.txt": "x\n"})
	fy := p.freeze(wy, "y", map[string]string{"a.txt": "one\nY\nthree\n", "y.txt": "y\n"})
	before := map[string]string{p.dir: state(t, p.dir), wx.Dir: state(t, wx.Dir), wy.Dir: state(t, wy.Dir)}
	refs := p.run("for-each-ref")
	count := commitCount(t, p.git)
	_, err := p.repo.Integrate(ctx, "run-1", delivery, p.base, []worktree.Step{{Ticket: "x", Commit: fx.Head, Candidate: "sha256:x"}, {Ticket: "y", Commit: fy.Head, Candidate: "sha256:y"}})
	e := wantCode(t, err, worktree.CodeMergeConflict)
	if !slices.Equal(e.Files, []string{"a.txt"}) || !strings.Contains(e.Detail, "ticket y") {
		t.Errorf("conflict = %+v", e)
	}
	if got := p.run("for-each-ref"); got != refs {
		t.Errorf("refs changed:\n%s\nwant\n%s", got, refs)
	}
	for dir, want := range before {
		if got := state(t, dir); got != want {
			t.Errorf("%s changed:\n%s\nwant\n%s", dir, got, want)
		}
	}
	// x's merge was made as an object but never reached a ref; the next integration of x
	// alone succeeds from the same commit.
	if commitCount(t, p.git) != count {
		t.Error("a refused integration left a commit reachable")
	}
	in, err := p.repo.Integrate(ctx, "run-1", delivery, p.base, []worktree.Step{{Ticket: "x", Commit: fx.Head, Candidate: "sha256:x"}})
	if err != nil || len(in.Merges) != 1 {
		t.Fatalf("x alone: %+v, %v", in, err)
	}
}

func TestIntegrateRefusesMovedOrCheckedOutBranch(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	w := p.ticket("t1", delivery, p.base)
	f := p.freeze(w, "t1", map[string]string{"b.txt": "b\n"})
	steps := []worktree.Step{{Ticket: "t1", Commit: f.Head, Candidate: "sha256:c"}}
	moved := p.commit(p.git, map[string]string{"c.txt": "c\n"}, "someone else")
	p.run("branch", "-f", delivery, moved)
	_, err := p.repo.Integrate(ctx, "run-1", delivery, p.base, steps)
	if e := wantCode(t, err, worktree.CodeBranchMoved); e.Got != moved {
		t.Errorf("moved: %+v", e)
	}
	p.run("branch", "-f", delivery, p.base)
	p.run("checkout", "-q", delivery)
	_, err = p.repo.Integrate(ctx, "run-1", delivery, p.base, steps)
	if e := wantCode(t, err, worktree.CodeBranchCheckedOut); len(e.Files) != 1 || e.Files[0] != filepath.Clean(p.dir) {
		t.Errorf("checked out: %+v (want %s)", e, p.dir)
	}
	if h, _, _ := p.repo.BranchHead(ctx, delivery); h != p.base {
		t.Errorf("the checked-out branch moved to %s", h)
	}
	for _, bad := range []worktree.Step{{Ticket: "t1\nRein-Ticket: t2", Commit: f.Head, Candidate: "c"}, {Ticket: "t1", Commit: "HEAD", Candidate: "c"}} {
		p.run("checkout", "-q", "main")
		if _, err := p.repo.Integrate(ctx, "run-1", delivery, p.base, []worktree.Step{bad}); err == nil {
			t.Errorf("Integrate(%+v) succeeded", bad)
		}
	}
}

func TestDiffDigestFromObjects(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, delivery, p.base); err != nil {
		t.Fatal(err)
	}
	w := p.ticket("t1", delivery, p.base)
	f := p.freeze(w, "t1", map[string]string{"b.txt": "b\n"})
	if err := p.repo.Remove(ctx, w.Dir); err != nil {
		t.Fatal(err)
	}
	d, err := p.repo.DiffDigest(ctx, p.base, f.Head)
	if err != nil || d != f.DiffDigest {
		t.Fatalf("DiffDigest = %s, %v; frozen %s", d, err, f.DiffDigest)
	}
	if d, _ := p.repo.DiffDigest(ctx, p.base, p.base); d == f.DiffDigest {
		t.Error("an empty diff has the candidate's digest")
	}
}
