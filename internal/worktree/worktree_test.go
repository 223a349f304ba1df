package worktree_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/worktree"
)

func TestCreateReuseAndMovedBase(t *testing.T) {
	p := newProject(t)
	if err := p.repo.CreateBranch(ctx, "rein/run-1", p.base); err != nil {
		t.Fatal(err)
	}
	if err := p.repo.CreateBranch(ctx, "rein/run-1", p.base); err != nil {
		t.Fatalf("CreateBranch again at the same base: %v", err)
	}
	before := state(t, p.dir)
	w := p.ticket("t1", "rein/run-1", p.base)
	if h, err := w.Head(ctx); err != nil || h != p.base || w.Base != p.base {
		t.Fatalf("Head = %s, %v; Base %s; want %s", h, err, w.Base, p.base)
	}
	if got := read(t, filepath.Join(w.Dir, "a.txt")); got != "one\ntwo\nthree\n" {
		t.Fatalf("a.txt = %q", got)
	}
	// Reused as it is: the interrupted attempt's edit stays.
	write(t, w.Dir, map[string]string{"a.txt": "edited\n"})
	again := p.ticket("t1", "rein/run-1", p.base)
	if again.Dir != w.Dir || read(t, filepath.Join(w.Dir, "a.txt")) != "edited\n" {
		t.Fatalf("Create did not reuse the worktree as it is")
	}
	if ch, err := again.Changes(ctx); err != nil || !slices.Equal(ch, []string{"a.txt"}) {
		t.Fatalf("Changes = %v, %v", ch, err)
	}
	// The branch moved: a new worktree from the recorded base is drift.
	moved := p.commit(p.git, map[string]string{"b.txt": "b\n"}, "elsewhere")
	p.run("branch", "-f", "rein/run-1", moved)
	_, err := p.repo.Create(ctx, filepath.Join(p.home, "t2"), "rein/run-1", p.base)
	e := wantCode(t, err, worktree.CodeBaseMoved)
	if e.Want != p.base || e.Got != moved {
		t.Errorf("base moved: want %s got %s", e.Want, e.Got)
	}
	if _, err := os.Stat(filepath.Join(p.home, "t2")); !os.IsNotExist(err) {
		t.Errorf("a refused worktree left %s: %v", filepath.Join(p.home, "t2"), err)
	}
	if err := p.repo.CreateBranch(ctx, "rein/run-1", p.base); err == nil {
		t.Fatal("CreateBranch over a branch at another commit succeeded")
	} else {
		wantCode(t, err, worktree.CodeBranchExists)
	}
	// The existing worktree is still reused: its HEAD is the recorded base.
	if _, err := p.repo.Create(ctx, w.Dir, "rein/run-1", p.base); err != nil {
		t.Fatalf("reuse after the branch moved: %v", err)
	}
	// A worktree at another HEAD is reported, never reset.
	other := p.commit(gitx.Runner{Dir: w.Dir}, nil, "someone committed")
	_, err = p.repo.Create(ctx, w.Dir, "rein/run-1", p.base)
	if e := wantCode(t, err, worktree.CodeHeadMismatch); e.Got != other {
		t.Errorf("head mismatch got %s, want %s", e.Got, other)
	}
	if h, _ := w.Head(ctx); h != other || read(t, filepath.Join(w.Dir, "a.txt")) != "edited\n" {
		t.Errorf("the mismatched worktree was changed")
	}
	// A directory that is no worktree is neither used nor deleted.
	foreign := filepath.Join(p.home, "foreign")
	write(t, foreign, map[string]string{"keep.txt": "mine\n"})
	_, err = p.repo.Create(ctx, foreign, "rein/run-1", moved)
	wantCode(t, err, worktree.CodeNotWorktree)
	wantCode(t, p.repo.Remove(ctx, foreign), worktree.CodeNotWorktree)
	if read(t, filepath.Join(foreign, "keep.txt")) != "mine\n" {
		t.Error("the foreign directory was touched")
	}
	if _, err := p.repo.Create(ctx, w.Dir, "rein/run-1", "deadbeef"); err == nil {
		t.Error("Create with an abbreviated or unknown base succeeded")
	}
	if got := state(t, p.dir); got != strings.Replace(before, p.base, moved, 1) {
		t.Errorf("the project's checkout changed beyond the test's own commit:\n%s\nwant\n%s", got, before)
	}
}

func TestInterruptedCreateIsRedone(t *testing.T) {
	p := newProject(t)
	w := p.ticket("t1", "main", p.base)
	// An add killed half-way: git's initializing lock left, files missing.
	gitdir := strings.TrimSpace(strings.TrimPrefix(read(t, filepath.Join(w.Dir, ".git")), "gitdir:"))
	write(t, gitdir, map[string]string{"locked": "initializing"})
	write(t, w.Dir, map[string]string{"a.txt": ""})
	list, err := p.repo.List(ctx, p.home)
	if err != nil || len(list) != 1 || !list[0].Locked || list[0].LockReason != "initializing" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if _, err := p.repo.Open(ctx, w.Dir, p.base); err == nil {
		t.Fatal("Open of a half-made worktree succeeded")
	}
	w2 := p.ticket("t1", "main", p.base)
	if read(t, filepath.Join(w2.Dir, "a.txt")) != "one\ntwo\nthree\n" {
		t.Fatal("the interrupted worktree was not made again")
	}
	if ch, err := w2.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("Changes = %v, %v", ch, err)
	}
	// A registered worktree whose directory vanished is made again too.
	if err := os.RemoveAll(w2.Dir); err != nil {
		t.Fatal(err)
	}
	w3 := p.ticket("t1", "main", p.base)
	if read(t, filepath.Join(w3.Dir, "a.txt")) != "one\ntwo\nthree\n" {
		t.Fatal("a vanished worktree was not made again")
	}
}

func TestFreezeDigests(t *testing.T) {
	p := newProject(t)
	w := p.ticket("t1", "main", p.base)
	f := p.freeze(w, "t1", map[string]string{"a.txt": "one\n2\nthree\n", "src/new.go": "package src\n", "build.log": "ignored\n"})
	if f.Base != p.base || f.Parent != p.base || f.Head == p.base || !strings.HasPrefix(f.DiffDigest, "sha256:") {
		t.Fatalf("Frozen = %+v", f)
	}
	if want := []string{"a.txt", "src/new.go"}; !slices.Equal(f.Files, want) {
		t.Errorf("Files = %v, want %v (the ignored file left out)", f.Files, want)
	}
	g := gitx.Runner{Dir: w.Dir}
	if who := p.runIn(g, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%P"); who != "rein <rein@rein.invalid>|rein <rein@rein.invalid>|"+p.base {
		t.Errorf("commit identity and parent = %q", who)
	}
	if msg := p.runIn(g, "log", "-1", "--format=%B"); !strings.Contains(msg, "Rein-Run: run-1\nRein-Ticket: t1\nRein-Attempt: 1") {
		t.Errorf("message = %q", msg)
	}
	c := worktree.Seal(f, "sha256:artifact")
	if err := w.Verify(ctx, c); err != nil {
		t.Fatalf("Verify of a fresh candidate: %v", err)
	}
	// Stable: freezing again (a crash before the caller recorded it) returns the same commit.
	count := commitCount(t, p.git)
	f2, err := w.Freeze(ctx, worktree.FreezeSpec{Run: "run-1", Ticket: "t1", Attempt: "1", Parent: p.base})
	if err != nil || f2.Head != f.Head || f2.DiffDigest != f.DiffDigest || worktree.Seal(f2, "sha256:artifact").Digest != c.Digest {
		t.Fatalf("Freeze again = %+v, %v; want the same candidate %+v", f2, err, f)
	}
	if commitCount(t, p.git) != count {
		t.Error("freezing again made a commit")
	}
	// The same commit under another attempt's name is not this attempt's candidate.
	_, err = w.Freeze(ctx, worktree.FreezeSpec{Run: "run-1", Ticket: "t1", Attempt: "2", Parent: p.base})
	wantCode(t, err, worktree.CodeHeadMismatch)
	// The digest changes with the diff and with the artifact.
	w2 := p.ticket("t2", "main", p.base)
	f3 := p.freeze(w2, "t2", map[string]string{"a.txt": "one\n3\nthree\n", "src/new.go": "package src\n"})
	if f3.DiffDigest == f.DiffDigest || worktree.Seal(f3, "sha256:artifact").Digest == c.Digest {
		t.Error("another diff gives the same digests")
	}
	if worktree.Seal(f, "sha256:other").Digest == c.Digest {
		t.Error("another artifact gives the same candidate digest")
	}
	// A second attempt continues from the first candidate; its diff is still from the base.
	f4, err := func() (worktree.Frozen, error) {
		write(t, w.Dir, map[string]string{"a.txt": "one\n2\n3\n"})
		return w.Freeze(ctx, worktree.FreezeSpec{Run: "run-1", Ticket: "t1", Attempt: "2", Parent: f.Head})
	}()
	if err != nil || f4.Parent != f.Head || f4.Base != p.base || !slices.Equal(f4.Files, f.Files) {
		t.Fatalf("second attempt = %+v, %v", f4, err)
	}
	diff, err := w.Diff(ctx, p.base, f4.Head)
	if err != nil || !strings.Contains(string(diff), "+3\n") || !strings.Contains(string(diff), "+package src") {
		t.Fatalf("Diff = %s, %v", diff, err)
	}
}

func (p *project) runIn(g gitx.Runner, args ...string) string {
	p.t.Helper()
	out, err := g.Output(ctx, args...)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

func TestFreezeRefusesEmptyDiff(t *testing.T) {
	p := newProject(t)
	w := p.ticket("t1", "main", p.base)
	spec := worktree.FreezeSpec{Run: "run-1", Ticket: "t1", Attempt: "1", Parent: p.base}
	_, err := w.Freeze(ctx, spec)
	wantCode(t, err, worktree.CodeDiffEmpty)
	write(t, w.Dir, map[string]string{"debug.log": "only an ignored file\n"})
	_, err = w.Freeze(ctx, spec)
	wantCode(t, err, worktree.CodeDiffEmpty)
	write(t, w.Dir, map[string]string{"a.txt": "changed\n"})
	write(t, w.Dir, map[string]string{"a.txt": "one\ntwo\nthree\n"}) // and changed back
	_, err = w.Freeze(ctx, spec)
	wantCode(t, err, worktree.CodeDiffEmpty)
	if h, _ := w.Head(ctx); h != p.base {
		t.Errorf("a refused freeze moved HEAD to %s", h)
	}
	for _, bad := range []worktree.FreezeSpec{{Run: "run-1", Ticket: "t1\nRein-Ticket: t9", Attempt: "1", Parent: p.base}, {Run: "", Ticket: "t1", Attempt: "1"}} {
		if _, err := w.Freeze(ctx, bad); err == nil || strings.Contains(err.Error(), "worktree_") {
			t.Errorf("Freeze(%q) = %v; want an id error", bad.Ticket, err)
		}
	}
}

func TestStaleCandidate(t *testing.T) {
	p := newProject(t)
	w := p.ticket("t1", "main", p.base)
	c := worktree.Seal(p.freeze(w, "t1", map[string]string{"a.txt": "frozen\n"}), "sha256:artifact")
	write(t, w.Dir, map[string]string{"a.txt": "changed during review\n"})
	e := wantCode(t, w.Verify(ctx, c), worktree.CodeCandidateStale)
	if !slices.Equal(e.Files, []string{"a.txt"}) {
		t.Errorf("stale files = %v", e.Files)
	}
	write(t, w.Dir, map[string]string{"a.txt": "frozen\n"})
	if err := w.Verify(ctx, c); err != nil {
		t.Fatalf("restored content: %v", err)
	}
	write(t, w.Dir, map[string]string{"extra.go": "package x\n"})
	if e := wantCode(t, w.Verify(ctx, c), worktree.CodeCandidateStale); !slices.Equal(e.Files, []string{"extra.go"}) {
		t.Errorf("new file: %v", e.Files)
	}
	moved := p.commit(gitx.Runner{Dir: w.Dir}, nil, "amend behind rein's back")
	if e := wantCode(t, w.Verify(ctx, c), worktree.CodeCandidateStale); e.Got != moved {
		t.Errorf("moved HEAD: %+v", e)
	}
	tampered := c
	tampered.ArtifactDigest = "sha256:other"
	wantCode(t, w.Verify(ctx, tampered), worktree.CodeCandidateStale)
}

func TestCheckoutIsClean(t *testing.T) {
	p := newProject(t)
	w := p.ticket("t1", "main", p.base)
	f := p.freeze(w, "t1", map[string]string{"a.txt": "frozen\n"})
	dir := filepath.Join(p.home, "verify", "t1")
	v, err := p.repo.Checkout(ctx, dir, f.Head)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := v.Head(ctx); h != f.Head || read(t, filepath.Join(v.Dir, "a.txt")) != "frozen\n" {
		t.Fatalf("checkout at %s", h)
	}
	write(t, v.Dir, map[string]string{"out.log": "build output\n", "a.txt": "scribbled\n"})
	v, err = p.repo.Checkout(ctx, dir, f.Head)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(v.Dir, "out.log")); !os.IsNotExist(err) || read(t, filepath.Join(v.Dir, "a.txt")) != "frozen\n" {
		t.Errorf("a second checkout is not clean: %v", err)
	}
	if err := w.Verify(ctx, worktree.Seal(f, "sha256:a")); err != nil {
		t.Errorf("the verification checkout disturbed the ticket worktree: %v", err)
	}
}

func TestListAndRemove(t *testing.T) {
	p := newProject(t)
	w1 := p.ticket("t1", "main", p.base)
	p.ticket("t2", "main", p.base)
	write(t, w1.Dir, map[string]string{"dirty.txt": "uncommitted\n"})
	other := filepath.Join(t.TempDir(), "elsewhere")
	if _, err := p.repo.Create(ctx, other, "main", p.base); err != nil {
		t.Fatal(err)
	}
	list, err := p.repo.List(ctx, p.home)
	if err != nil || len(list) != 2 || list[0].Head != p.base || list[0].Branch != "" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := p.repo.Remove(ctx, w1.Dir); err != nil {
		t.Fatal(err)
	}
	if err := p.repo.Remove(ctx, w1.Dir); err != nil {
		t.Fatalf("removing a removed worktree: %v", err)
	}
	if err := p.repo.RemoveAll(ctx, p.home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.home); !os.IsNotExist(err) {
		t.Errorf("the run's worktree directory is left: %v", err)
	}
	if list, err := p.repo.List(ctx, filepath.Dir(other)); err != nil || len(list) != 1 {
		t.Errorf("a worktree outside the run was touched: %+v, %v", list, err)
	}
}
