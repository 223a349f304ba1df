package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/internal/gitx"
)

// initializing is the lock reason git gives a worktree while `git worktree add` creates it;
// one left behind is an add that was interrupted.
const initializing = "initializing"

// Worktree is a ticket worktree (or a verification checkout): a detached work tree of the
// repository, made from Base.
type Worktree struct {
	Dir  string // absolute
	Base string // the commit it was made from
	git  gitx.Runner
}

func (r *Repo) handle(dir, base string) *Worktree {
	return &Worktree{Dir: canon(dir), Base: base, git: gitx.Runner{Dir: canon(dir)}}
}

// Create returns the ticket worktree at dir made from base, the commit the caller recorded
// for the delivery branch: CreateAt with base as the start.
func (r *Repo) Create(ctx context.Context, dir, branch, base string) (*Worktree, error) {
	return r.CreateAt(ctx, dir, branch, base, base)
}

// CreateAt returns the ticket worktree at dir, made from start: the ticket's start commit
// ([Repo.Start]), which is base — the commit the caller recorded for the delivery branch — or
// a descendant of it ([CodeStartMismatch] otherwise). It is idempotent and safe to repeat
// after a crash:
//
//   - no worktree at dir: the branch must point at base ([CodeBaseMoved] otherwise: drift),
//     and a detached worktree of start is made there (its parent directories too);
//   - a worktree at dir whose HEAD is start: it is reused as it is, uncommitted changes
//     included ([Worktree.Changes] tells);
//   - a worktree at dir at another HEAD: [CodeHeadMismatch], never reset;
//   - a worktree whose creation was interrupted (git's "initializing" lock): removed and made
//     again;
//   - a directory at dir that is no worktree of the repository: [CodeNotWorktree] unless it
//     is empty.
//
// The worktree's Base is start: its candidates' diffs are from there.
func (r *Repo) CreateAt(ctx context.Context, dir, branch, base, start string) (*Worktree, error) {
	if err := r.isCommit(ctx, base); err != nil {
		return nil, err
	}
	if start != base {
		if err := r.isCommit(ctx, start); err != nil {
			return nil, err
		}
		if err := r.descends(ctx, base, start, "the ticket's start commit"); err != nil {
			return nil, err
		}
	}
	e, err := r.entry(ctx, dir)
	if err != nil {
		return nil, err
	}
	if e != nil && e.Locked && e.LockReason == initializing {
		if err := r.remove(ctx, e); err != nil {
			return nil, err
		}
		e = nil
	}
	if e != nil && !e.Prunable {
		if e.Head != start {
			return nil, &Error{Code: CodeHeadMismatch, Dir: e.Dir, Want: start, Got: e.Head,
				Detail: "the ticket worktree exists at another commit than its start; it is left as it is: open it as a frozen candidate or remove it"}
		}
		return r.handle(dir, start), nil
	}
	head, ok, err := r.BranchHead(ctx, branch)
	if err != nil {
		return nil, err
	}
	if !ok || head != base {
		return nil, &Error{Code: CodeBaseMoved, Dir: branch, Want: base, Got: head,
			Detail: "the delivery branch is not at the recorded base commit; the run drifted"}
	}
	if err := r.add(ctx, dir, start, e != nil); err != nil {
		return nil, err
	}
	return r.handle(dir, start), nil
}

// Open returns the registered worktree at dir, with base the commit the caller recorded it
// was made from (its start): HEAD may be any commit that descends from it (a candidate, a
// later attempt's), and one that does not is [CodeStartMismatch] — that worktree was not made
// from the recorded start, so nothing in it is used. A directory that is not registered is
// [CodeNotWorktree].
func (r *Repo) Open(ctx context.Context, dir, base string) (*Worktree, error) {
	e, err := r.entry(ctx, dir)
	if err != nil {
		return nil, err
	}
	if e == nil || e.Prunable || (e.Locked && e.LockReason == initializing) {
		return nil, &Error{Code: CodeNotWorktree, Dir: dir, Detail: "no complete worktree of " + r.git.Dir + " is there"}
	}
	on, err := r.git.IsAncestor(ctx, base, e.Head)
	if err != nil {
		return nil, fmt.Errorf("worktree: is %s on %s's HEAD: %w", short(base), e.Dir, err)
	}
	if !on {
		return nil, &Error{Code: CodeStartMismatch, Dir: e.Dir, Want: base, Got: e.Head,
			Detail: "the worktree's HEAD does not descend from the commit it was recorded to start from; it is left as it is"}
	}
	return r.handle(dir, base), nil
}

// Checkout makes a clean, detached checkout of commit at dir, for verification: a worktree
// already registered at dir (from an earlier verification) is removed first, with every
// file a command left in it; a directory that is no worktree of the repository is
// [CodeNotWorktree] unless it is empty.
func (r *Repo) Checkout(ctx context.Context, dir, commit string) (*Worktree, error) {
	if err := r.isCommit(ctx, commit); err != nil {
		return nil, err
	}
	e, err := r.entry(ctx, dir)
	if err != nil {
		return nil, err
	}
	if e != nil {
		if err := r.remove(ctx, e); err != nil {
			return nil, err
		}
	}
	if err := r.add(ctx, dir, commit, false); err != nil {
		return nil, err
	}
	return r.handle(dir, commit), nil
}

// add runs git worktree add --detach; force overrides a registration whose directory is gone.
func (r *Repo) add(ctx context.Context, dir, commit string, force bool) error {
	if err := usableDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(canon(dir)), 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	args := []string{"worktree", "add", "--detach", "--quiet"}
	if force {
		args = append(args, "--force")
	}
	defer r.lockAdmin()()
	if _, err := r.git.Run(ctx, append(args, "--end-of-options", canon(dir), commit)...); err != nil {
		return fmt.Errorf("worktree: creating the worktree %s at %s: %w", dir, short(commit), err)
	}
	return nil
}

// usableDir refuses a directory that exists and holds something: it is no worktree of the
// repository (the caller checked), so it is someone's data.
func usableDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &Error{Code: CodeNotWorktree, Dir: dir, Detail: err.Error()}
	}
	if len(entries) > 0 {
		return &Error{Code: CodeNotWorktree, Dir: dir, Detail: "the directory exists, holds files and is no worktree of the repository; rein neither uses nor deletes it"}
	}
	return nil
}

// Head returns the commit checked out in the worktree.
func (w *Worktree) Head(ctx context.Context) (string, error) {
	h, err := w.git.Head(ctx)
	if err != nil {
		return "", fmt.Errorf("worktree: reading HEAD of %s: %w", w.Dir, err)
	}
	return h, nil
}

// Changes lists the paths whose content differs from HEAD: modified, deleted and new files
// (ignored files aside), slash-separated and relative to the worktree, in git's order.
func (w *Worktree) Changes(ctx context.Context) ([]string, error) {
	out, err := w.git.Run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=none")
	if err != nil {
		return nil, fmt.Errorf("worktree: reading the status of %s: %w", w.Dir, err)
	}
	var paths []string
	for _, f := range gitx.SplitNUL(out) {
		if len(f) > 3 {
			paths = append(paths, f[3:])
		}
	}
	return paths, nil
}
