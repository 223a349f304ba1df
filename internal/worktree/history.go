package worktree

import "context"

// DiffDigest returns the diff digest of commit a to commit b ("sha256:" and the hex sha256 of
// [Worktree.Diff]), computed from the repository's objects alone: what a frozen candidate's
// DiffDigest is checked against once its worktree is gone.
func (r *Repo) DiffDigest(ctx context.Context, a, b string) (string, error) {
	w := &Worktree{Dir: r.git.Dir, git: r.git}
	d, err := w.Diff(ctx, a, b)
	if err != nil {
		return "", err
	}
	return sum(d), nil
}
