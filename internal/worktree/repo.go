package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/reinhq/rein/internal/gitx"
)

// Repo is the project's repository: the one every ticket worktree, verification checkout and
// the delivery branch belong to. A Repo holds no state besides its directory.
type Repo struct {
	git gitx.Runner
}

// OpenRepo returns the repository whose work tree holds dir.
func OpenRepo(ctx context.Context, dir string) (*Repo, error) {
	top, err := gitx.Runner{Dir: dir}.TopLevel(ctx)
	if err != nil {
		return nil, fmt.Errorf("worktree: opening the repository at %s: %w", dir, err)
	}
	return &Repo{git: gitx.Runner{Dir: top}}, nil
}

// Dir returns the top of the repository's work tree.
func (r *Repo) Dir() string { return r.git.Dir }

// BranchHead returns the commit the local branch points at; ok is false when there is no
// such branch.
func (r *Repo) BranchHead(ctx context.Context, branch string) (head string, ok bool, err error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", false, err
	}
	return r.git.ResolveCommit(ctx, "refs/heads/"+branch)
}

// CreateBranch creates the local branch at base without checking it out. A branch that
// already points at base is left as it is (a repeated call after a crash is no error); one
// at another commit is [CodeBranchExists].
func (r *Repo) CreateBranch(ctx context.Context, branch, base string) error {
	head, ok, err := r.BranchHead(ctx, branch)
	if err != nil {
		return err
	}
	if ok {
		if head == base {
			return nil
		}
		return &Error{Code: CodeBranchExists, Dir: branch, Want: base, Got: head,
			Detail: "the branch exists at another commit; rein never moves a branch it did not create at the recorded base"}
	}
	if err := r.isCommit(ctx, base); err != nil {
		return err
	}
	// An empty old value makes the update fail if the branch appeared in the meantime.
	if _, err := r.git.Run(ctx, "update-ref", "-m", "rein: create the delivery branch", "refs/heads/"+branch, base, ""); err != nil {
		return fmt.Errorf("worktree: creating branch %s at %s: %w", branch, short(base), err)
	}
	return nil
}

func (r *Repo) checkBranch(ctx context.Context, branch string) error {
	if _, err := r.git.Run(ctx, "check-ref-format", "--branch", branch); err != nil || strings.HasPrefix(branch, "-") {
		return fmt.Errorf("worktree: %q is not a valid branch name: %w", branch, err)
	}
	return nil
}

// isCommit checks that id is the full id of a commit of the repository.
func (r *Repo) isCommit(ctx context.Context, id string) error {
	got, ok, err := r.git.ResolveCommit(ctx, id)
	if err != nil {
		return fmt.Errorf("worktree: resolving %s: %w", short(id), err)
	}
	if !ok || got != id {
		return fmt.Errorf("worktree: %q is not the full id of a commit of %s", id, r.git.Dir)
	}
	return nil
}

// Entry is one worktree registered in the repository.
type Entry struct {
	Dir    string // absolute, symbolic links resolved where the directory exists
	Head   string // the commit checked out ("" for a bare entry)
	Branch string // the branch checked out, "refs/heads/…"; "" when detached
	// Locked is set while git creates the worktree (reason "initializing") or when someone
	// locked it; LockReason is the reason given.
	Locked     bool
	LockReason string
	// Prunable: the worktree's directory is gone; only its registration is left.
	Prunable bool
}

// adminLocks holds, per repository (its top-level directory), the lock of the git commands
// that read or write its worktree registrations (.git/worktrees): git's `worktree add` is not
// safe against another add, or a list, running at the same time — either reads the other's
// half-made registration ("failed to read .git/worktrees/<name>/commondir") — and the tickets
// of a batch make their worktrees and checkouts at the same time.
var adminLocks sync.Map

// lockAdmin takes r's registration lock and returns its release.
func (r *Repo) lockAdmin() func() {
	m, _ := adminLocks.LoadOrStore(r.git.Dir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// worktrees lists every registered worktree, the main one first.
func (r *Repo) worktrees(ctx context.Context) ([]Entry, error) {
	unlock := r.lockAdmin()
	out, err := r.git.Run(ctx, "worktree", "list", "--porcelain", "-z")
	unlock()
	if err != nil {
		return nil, fmt.Errorf("worktree: listing the worktrees of %s: %w", r.git.Dir, err)
	}
	var list []Entry
	var cur *Entry
	for _, f := range gitx.SplitNUL(out) {
		key, val, _ := strings.Cut(f, " ")
		switch {
		case f == "":
			cur = nil
		case key == "worktree":
			list = append(list, Entry{Dir: canon(val)})
			cur = &list[len(list)-1]
		case cur == nil:
			return nil, fmt.Errorf("worktree: git worktree list printed %q outside a worktree record", f)
		case key == "HEAD":
			cur.Head = val
		case key == "branch":
			cur.Branch = val
		case key == "locked":
			cur.Locked, cur.LockReason = true, val
		case key == "prunable":
			cur.Prunable = true
		}
	}
	return list, nil
}

// entry returns the registered worktree at dir, or nil.
func (r *Repo) entry(ctx context.Context, dir string) (*Entry, error) {
	list, err := r.worktrees(ctx)
	if err != nil {
		return nil, err
	}
	dir = canon(dir)
	for i := range list {
		if list[i].Dir == dir {
			return &list[i], nil
		}
	}
	return nil, nil
}

// List returns the registered worktrees below the directory under (a run's worktree
// directory), the repository's own work tree never among them.
func (r *Repo) List(ctx context.Context, under string) ([]Entry, error) {
	list, err := r.worktrees(ctx)
	if err != nil {
		return nil, err
	}
	root := canon(under) + string(filepath.Separator)
	var out []Entry
	for _, e := range list[min(1, len(list)):] {
		if strings.HasPrefix(e.Dir, root) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Remove removes the registered worktree at dir, its uncommitted changes included. A
// directory that is no worktree of this repository is [CodeNotWorktree] and stays; a
// directory that does not exist and is not registered is no error.
func (r *Repo) Remove(ctx context.Context, dir string) error {
	e, err := r.entry(ctx, dir)
	if err != nil {
		return err
	}
	if e == nil {
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return &Error{Code: CodeNotWorktree, Dir: dir, Detail: "not a worktree of " + r.git.Dir + "; rein removes only its own worktrees"}
	}
	return r.remove(ctx, e)
}

func (r *Repo) remove(ctx context.Context, e *Entry) error {
	if e.Prunable {
		// Only the registration is left: pruning drops it (and those of other worktrees whose
		// directories are gone, which git would prune at its next gc).
		defer r.lockAdmin()()
		if _, err := r.git.Run(ctx, "worktree", "prune"); err != nil {
			return fmt.Errorf("worktree: pruning the registration of %s: %w", e.Dir, err)
		}
		return nil
	}
	// Twice --force: remove it even when it has changes or is locked (an interrupted add).
	defer r.lockAdmin()()
	if _, err := r.git.Run(ctx, "worktree", "remove", "--force", "--force", e.Dir); err != nil {
		return fmt.Errorf("worktree: removing %s: %w", e.Dir, err)
	}
	return nil
}

// RemoveAll removes every worktree below under (List), then under itself and the
// directories below it when they are left empty. A file rein did not put there stays.
func (r *Repo) RemoveAll(ctx context.Context, under string) error {
	list, err := r.List(ctx, under)
	if err != nil {
		return err
	}
	for i := range list {
		if err := r.remove(ctx, &list[i]); err != nil {
			return err
		}
	}
	return removeEmptyDirs(under)
}

// removeEmptyDirs removes dir and the directories below it that hold nothing else.
func removeEmptyDirs(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeEmptyDirs(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	err = os.Remove(dir)
	if err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// canon makes p absolute and resolves symbolic links in its longest existing prefix, so that
// paths git prints and paths callers pass compare equal.
func canon(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for cur := abs; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
