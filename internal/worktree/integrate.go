package worktree

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/gitx"
)

// Step is one accepted ticket to integrate.
type Step struct {
	Ticket    string
	Commit    string // the accepted candidate's commit
	Candidate string // the candidate digest, recorded in the merge commit's message
}

// Merge is what integrating one step did.
type Merge struct {
	Step
	// Into is the merge commit made for the step; "" when the step's commit was already on
	// the branch (merged by an earlier, interrupted integration) and nothing was made.
	Into string
}

// Integration is the outcome of [Repo.Integrate].
type Integration struct {
	Branch string
	From   string // the branch's commit before
	Head   string // the branch's commit after
	Merges []Merge
}

// Integrate merges the steps' commits, in the order given (dependency order: the caller's),
// into the local branch, which must point at from. Each merge is computed by git from
// objects alone (merge-tree): no work tree, index or checkout is written, the project's own
// checkout included. Every step gets a merge commit (rein's identity, a message naming run,
// ticket and candidate digest); the branch is moved once, from from to the last merge, with
// a compare-and-swap. So a conflict — [CodeMergeConflict], naming the ticket and the
// conflicting files — leaves the branch where it was and nothing half-merged anywhere.
//
// Repeating an integration that completed (a crash after the branch moved, before the caller
// recorded it) finds every commit on the branch and returns the branch's head with no new
// commit. A branch at another commit is [CodeBranchMoved]; a branch checked out in any
// worktree is [CodeBranchCheckedOut] (moving it would leave that checkout's files behind).
func (r *Repo) Integrate(ctx context.Context, run, branch, from string, steps []Step) (Integration, error) {
	if err := checkIDs("run", run); err != nil {
		return Integration{}, err
	}
	for _, s := range steps {
		if err := checkIDs("ticket", s.Ticket, "candidate digest", s.Candidate); err != nil {
			return Integration{}, err
		}
	}
	head, ok, err := r.BranchHead(ctx, branch)
	if err != nil {
		return Integration{}, err
	}
	if !ok {
		return Integration{}, fmt.Errorf("worktree: integrating into %s: no such branch", branch)
	}
	if err := r.notCheckedOut(ctx, branch); err != nil {
		return Integration{}, err
	}
	out := Integration{Branch: branch, From: from, Head: head}
	if head != from {
		done, err := r.allOn(ctx, head, steps)
		if err != nil {
			return Integration{}, err
		}
		if !done {
			return Integration{}, &Error{Code: CodeBranchMoved, Dir: branch, Want: from, Got: head,
				Detail: "the delivery branch moved since integration started; rein integrates only onto the commit it recorded"}
		}
		for _, s := range steps {
			out.Merges = append(out.Merges, Merge{Step: s})
		}
		return out, nil
	}
	tip := head
	for _, s := range steps {
		m, err := r.mergeStep(ctx, run, branch, tip, s)
		if err != nil {
			return Integration{}, err
		}
		out.Merges = append(out.Merges, m)
		if m.Into != "" {
			tip = m.Into
		}
	}
	if tip != head {
		if _, err := r.git.Run(ctx, "update-ref", "-m", "rein: integrate run "+run, "refs/heads/"+branch, tip, head); err != nil {
			return Integration{}, fmt.Errorf("worktree: moving %s from %s to %s: %w", branch, short(head), short(tip), err)
		}
	}
	out.Head = tip
	return out, nil
}

// mergeStep merges s.Commit onto tip without touching any work tree and returns the merge
// commit (none when s.Commit is already on tip).
func (r *Repo) mergeStep(ctx context.Context, run, branch, tip string, s Step) (Merge, error) {
	if err := r.isCommit(ctx, s.Commit); err != nil {
		return Merge{}, err
	}
	on, err := r.git.IsAncestor(ctx, s.Commit, tip)
	if err != nil {
		return Merge{}, fmt.Errorf("worktree: is %s on %s: %w", short(s.Commit), branch, err)
	}
	if on {
		return Merge{Step: s}, nil
	}
	tree, conflicts, err := r.mergeTree(ctx, tip, s.Commit)
	if err != nil {
		return Merge{}, fmt.Errorf("worktree: merging ticket %s (%s) onto %s: %w", s.Ticket, short(s.Commit), short(tip), err)
	}
	if conflicts != nil {
		return Merge{}, &Error{Code: CodeMergeConflict, Dir: branch, Want: s.Commit, Got: tip, Files: conflicts,
			Detail: fmt.Sprintf("ticket %s does not merge cleanly onto the delivery branch; the branch and every checkout are unchanged", s.Ticket)}
	}
	msg := fmt.Sprintf("rein: integrate ticket %s of run %s\n\nRein-Run: %s\nRein-Ticket: %s\nRein-Candidate: %s\n", s.Ticket, run, run, s.Ticket, s.Candidate)
	args := slices.Concat(identity, []string{"commit-tree", "-p", tip, "-p", s.Commit, "-m", msg, "--end-of-options", tree})
	merge, err := r.git.Output(ctx, args...)
	if err != nil {
		return Merge{}, fmt.Errorf("worktree: writing the merge commit of ticket %s: %w", s.Ticket, err)
	}
	return Merge{Step: s, Into: merge}, nil
}

// allOn reports whether every step's commit is on head.
func (r *Repo) allOn(ctx context.Context, head string, steps []Step) (bool, error) {
	for _, s := range steps {
		on, err := r.git.IsAncestor(ctx, s.Commit, head)
		if err != nil || !on {
			return false, err
		}
	}
	return len(steps) > 0, nil
}

func (r *Repo) notCheckedOut(ctx context.Context, branch string) error {
	list, err := r.worktrees(ctx)
	if err != nil {
		return err
	}
	for _, e := range list {
		if e.Branch == "refs/heads/"+branch {
			return &Error{Code: CodeBranchCheckedOut, Dir: branch, Files: []string{e.Dir},
				Detail: "the delivery branch is checked out there; switch that checkout to another branch so rein can move it"}
		}
	}
	return nil
}

// mergeTree merges commits a and b from objects alone (git merge-tree --write-tree: no work
// tree or index is written) and returns the merged tree; conflicts, when the merge does not
// come out clean, lists the conflicting files (never nil then) and tree is "".
func (r *Repo) mergeTree(ctx context.Context, a, b string) (tree string, conflicts []string, err error) {
	res, err := r.git.Run(ctx, "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", "--end-of-options", a, b)
	if ge, ok := errors.AsType[*gitx.Error](err); ok && ge.ExitCode == 1 {
		fields := gitx.SplitNUL(res)
		files := []string{}
		if len(fields) > 1 {
			files = fields[1:]
		}
		if i := slices.Index(files, ""); i >= 0 {
			files = files[:i]
		}
		return "", files, nil
	}
	if err != nil {
		return "", nil, err
	}
	t, _, _ := strings.Cut(string(res), "\x00")
	return strings.TrimSpace(t), nil, nil
}
