package worktree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/gitx/gitxtest"
	"github.com/reinhq/rein/internal/worktree"
)

// TestHostileRepositoryRunsNothing runs every worktree operation over a repository whose
// configuration, .gitattributes (filter, diff and merge drivers on every file) and hooks each
// try to run a command: none may run.
func TestHostileRepositoryRunsNothing(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	h := gitxtest.NewHostile(t)
	home := filepath.Join(t.TempDir(), "worktrees", "run-1")
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		h.AssertNothingRan(t, what)
	}
	repo, err := worktree.OpenRepo(ctx, h.Dir)
	step("open", err)
	base, _, err := repo.BranchHead(ctx, "main")
	step("branch head", err)
	step("create branch", repo.CreateBranch(ctx, delivery, base))
	w1, err := repo.Create(ctx, filepath.Join(home, "t1"), delivery, base)
	step("create worktree (checkout, smudge, post-checkout)", err)
	w2, err := repo.Create(ctx, filepath.Join(home, "t2"), delivery, base)
	step("create a second worktree", err)
	if t.Failed() {
		t.FailNow()
	}
	write(t, w1.Dir, map[string]string{"notes.txt": "t1 first line\nneedle in notes\n", "src/extra.go": "package main\n"})
	write(t, w2.Dir, map[string]string{"notes.txt": "needle in notes\nt2 last line\n"})
	_, err = w1.Changes(ctx)
	step("changes (status, fsmonitor, clean filter)", err)
	f1, err := w1.Freeze(ctx, worktree.FreezeSpec{Run: "run-1", Ticket: "t1", Attempt: "1", Parent: base})
	step("freeze (add, commit: clean filter, hooks, gpg)", err)
	f2, err := w2.Freeze(ctx, worktree.FreezeSpec{Run: "run-1", Ticket: "t2", Attempt: "1", Parent: base})
	step("freeze a second ticket", err)
	c1 := worktree.Seal(f1, "sha256:a")
	step("verify (status, diff-tree: textconv, diff drivers)", w1.Verify(ctx, c1))
	_, err = w1.Diff(ctx, base, f1.Head)
	step("diff", err)
	_, err = repo.Checkout(ctx, filepath.Join(home, "verify"), f1.Head)
	step("verification checkout", err)
	// A ticket depending on t1 starts at its commit; one depending on both needs a merge of
	// notes.txt, whose driver is emptied: Start fails, and nothing runs either way.
	start, err := repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t3", Base: base, Deps: []worktree.Dep{{Ticket: "t1", Commit: f1.Head}}})
	step("start from one dependency", err)
	_, err = repo.CreateAt(ctx, filepath.Join(home, "t3"), delivery, base, start)
	step("create a worktree from a start (checkout, smudge, post-checkout)", err)
	_, err = repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t4", Base: base, Deps: []worktree.Dep{{Ticket: "t1", Commit: f1.Head}, {Ticket: "t2", Commit: f2.Head}}})
	h.AssertNothingRan(t, "start from two dependencies changing one file (merge driver)")
	if err == nil {
		t.Error("a start merge over an emptied merge driver succeeded")
	}
	// A start merge of two tickets changing different files writes its commit (hash-object,
	// no filters) and runs nothing.
	w5, err := repo.Create(ctx, filepath.Join(home, "t5"), delivery, base)
	step("create a third worktree", err)
	write(t, w5.Dir, map[string]string{"other.txt": "other\n"})
	f5, err := w5.Freeze(ctx, worktree.FreezeSpec{Run: "run-1", Ticket: "t5", Attempt: "1", Parent: base})
	step("freeze a third ticket", err)
	merged, err := repo.Start(ctx, worktree.StartSpec{Run: "run-1", Ticket: "t6", Base: base, Deps: []worktree.Dep{{Ticket: "t1", Commit: f1.Head}, {Ticket: "t5", Commit: f5.Head}}})
	step("start merge of two dependencies (merge-tree, hash-object)", err)
	if merged == f1.Head || merged == f5.Head || merged == "" {
		t.Errorf("start of two dependencies = %q", merged)
	}
	// Both tickets change notes.txt, whose merge attribute names the repository's driver:
	// with the driver emptied git fails (it does not fall back to its own merge), and the
	// branch stays where it was.
	_, err = repo.Integrate(ctx, "run-1", delivery, base, []worktree.Step{{Ticket: "t1", Commit: f1.Head, Candidate: "sha256:1"}, {Ticket: "t2", Commit: f2.Head, Candidate: "sha256:2"}})
	h.AssertNothingRan(t, "integrate two tickets changing one file (merge driver)")
	if head, _, _ := repo.BranchHead(ctx, delivery); err == nil || head != base {
		t.Errorf("integrating over an emptied merge driver: %v, branch at %s; want a failure and the branch at the base", err, head)
	}
	in, err := repo.Integrate(ctx, "run-1", delivery, base, []worktree.Step{{Ticket: "t1", Commit: f1.Head, Candidate: "sha256:1"}})
	step("integrate (merge-tree, commit-tree, update-ref: reference-transaction hook)", err)
	if in.Head == base {
		t.Error("the branch did not move")
	}
	_, err = repo.List(ctx, home)
	step("list", err)
	step("remove all", repo.RemoveAll(ctx, home))
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("worktrees left: %v", err)
	}
}
