package worktree

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Dep is an accepted ticket another ticket depends on: its id and its accepted candidate's
// commit.
type Dep struct {
	Ticket string
	Commit string
}

// StartSpec names the ticket whose start commit [Repo.Start] computes.
type StartSpec struct {
	Run, Ticket string
	// Base is the run's base commit: where a ticket without dependencies starts.
	Base string
	// Deps are the accepted tickets the ticket depends on, in any order.
	Deps []Dep
}

// Start returns the commit the ticket's worktree starts from, which holds exactly the
// accepted commits it depends on:
//
//   - no dependency: the base;
//   - one (or several, all but one of them already in the history of that one): its commit;
//   - several: a merge commit whose parents are their commits (ordered by ticket id), whose
//     tree git merges from objects alone (merge-tree: no work tree or index is written), made
//     with rein's fixed identity, a message naming run, ticket and dependencies and, as its
//     date, the latest of its parents' commit dates. So the same dependencies always give the
//     same commit id: a caller that recorded a start can recompute it (after a crash, in an
//     audit) and compare.
//
// Every dependency's commit must descend from the base ([CodeStartMismatch] otherwise).
// Dependencies that do not merge cleanly are [CodeDependencyConflict] naming the two tickets
// that conflict (all of them when only their combination does) and the files; no ref,
// worktree or index changes, and the commits Start wrote are unreferenced objects.
func (r *Repo) Start(ctx context.Context, s StartSpec) (string, error) {
	if err := checkIDs("run", s.Run, "ticket", s.Ticket); err != nil {
		return "", err
	}
	if err := r.isCommit(ctx, s.Base); err != nil {
		return "", err
	}
	deps := slices.SortedFunc(slices.Values(s.Deps), func(a, b Dep) int { return cmp.Compare(a.Ticket, b.Ticket) })
	for i, d := range deps {
		if err := checkIDs("ticket", d.Ticket); err != nil {
			return "", err
		}
		if i > 0 && deps[i-1].Ticket == d.Ticket {
			return "", fmt.Errorf("worktree: ticket %s is named twice among the dependencies of ticket %s", d.Ticket, s.Ticket)
		}
		if err := r.isCommit(ctx, d.Commit); err != nil {
			return "", err
		}
		if err := r.descends(ctx, s.Base, d.Commit, "dependency "+d.Ticket+"'s accepted commit"); err != nil {
			return "", err
		}
	}
	tips, err := r.independent(ctx, deps)
	if err != nil {
		return "", err
	}
	switch len(tips) {
	case 0:
		return s.Base, nil
	case 1:
		return tips[0].Commit, nil
	}
	return r.mergeDeps(ctx, s, tips)
}

// descends checks that commit is base or a descendant of it.
func (r *Repo) descends(ctx context.Context, base, commit, what string) error {
	on, err := r.git.IsAncestor(ctx, base, commit)
	if err != nil {
		return fmt.Errorf("worktree: is %s on %s: %w", short(base), short(commit), err)
	}
	if !on {
		return &Error{Code: CodeStartMismatch, Dir: r.git.Dir, Want: base, Got: commit,
			Detail: what + " does not descend from the run's base"}
	}
	return nil
}

// independent drops the dependencies whose commit is in the history of another's (the same
// commit counts once, for the first ticket naming it).
func (r *Repo) independent(ctx context.Context, deps []Dep) ([]Dep, error) {
	var out []Dep
	for i, d := range deps {
		covered := false
		for j, o := range deps {
			if i == j || covered {
				continue
			}
			if d.Commit == o.Commit {
				covered = j < i
				continue
			}
			on, err := r.git.IsAncestor(ctx, d.Commit, o.Commit)
			if err != nil {
				return nil, fmt.Errorf("worktree: is %s on %s: %w", short(d.Commit), short(o.Commit), err)
			}
			covered = on
		}
		if !covered {
			out = append(out, d)
		}
	}
	return out, nil
}

// mergeDeps merges the dependencies' commits one after another: each step's commit has every
// commit merged so far as a parent, and the last is the start.
func (r *Repo) mergeDeps(ctx context.Context, s StartSpec, tips []Dep) (string, error) {
	acc := tips[0].Commit
	for k := 1; k < len(tips); k++ {
		tree, conflicts, err := r.mergeTree(ctx, acc, tips[k].Commit)
		if err != nil {
			return "", fmt.Errorf("worktree: merging the dependencies of ticket %s: %w", s.Ticket, err)
		}
		if conflicts != nil {
			return "", r.depConflict(ctx, s, tips[:k+1], conflicts)
		}
		var parents []string
		for _, d := range tips[:k+1] {
			parents = append(parents, d.Commit)
		}
		if acc, err = r.writeCommit(ctx, tree, parents, startMessage(s, tips[:k+1])); err != nil {
			return "", err
		}
	}
	return acc, nil
}

// depConflict names the first pair of dependencies that conflict on their own, or all of
// them when only their combination does.
func (r *Repo) depConflict(ctx context.Context, s StartSpec, tips []Dep, files []string) error {
	last := tips[len(tips)-1]
	names := []string{}
	for _, d := range tips {
		names = append(names, d.Ticket)
	}
	for _, d := range tips[:len(tips)-1] {
		_, c, err := r.mergeTree(ctx, d.Commit, last.Commit)
		if err != nil {
			return fmt.Errorf("worktree: merging the dependencies %s and %s of ticket %s: %w", d.Ticket, last.Ticket, s.Ticket, err)
		}
		if c != nil {
			names, files = []string{d.Ticket, last.Ticket}, c
			break
		}
	}
	return &Error{Code: CodeDependencyConflict, Dir: s.Ticket, Tickets: names, Files: files,
		Detail: fmt.Sprintf("ticket %s depends on %s, whose accepted commits do not merge cleanly; no commit to start it from was made, no ref or checkout changed",
			s.Ticket, strings.Join(names, " and "))}
}

// startMessage is the message of a start commit: its trailers name the run, the ticket and
// each dependency with its commit.
func startMessage(s StartSpec, deps []Dep) string {
	var b strings.Builder
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = d.Ticket
	}
	fmt.Fprintf(&b, "rein: start ticket %s of run %s from %s\n\nRein-Run: %s\nRein-Ticket: %s\n", s.Ticket, s.Run, strings.Join(names, ", "), s.Run, s.Ticket)
	for _, d := range deps {
		fmt.Fprintf(&b, "Rein-Depends: %s %s\n", d.Ticket, d.Commit)
	}
	return b.String()
}

// writeCommit writes a commit object of tree with parents and msg, by rein's fixed identity,
// dated at the latest of its parents' commit dates (UTC): nothing of the moment or of the
// user's configuration enters it, so the same inputs give the same id.
func (r *Repo) writeCommit(ctx context.Context, tree string, parents []string, msg string) (string, error) {
	dates, err := r.git.Run(ctx, slices.Concat([]string{"log", "--no-walk=unsorted", "--format=%ct", "--end-of-options"}, parents, []string{"--"})...)
	if err != nil {
		return "", fmt.Errorf("worktree: reading the dates of %s: %w", strings.Join(parents, ", "), err)
	}
	when := int64(0)
	for f := range strings.FieldsSeq(string(dates)) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return "", fmt.Errorf("worktree: git log printed the commit date %q: %w", f, err)
		}
		when = max(when, n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author rein <rein@rein.invalid> %d +0000\ncommitter rein <rein@rein.invalid> %d +0000\n\n%s", when, when, msg)
	f, err := os.CreateTemp("", "rein-commit-*")
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return "", fmt.Errorf("worktree: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	id, err := r.git.Output(ctx, "hash-object", "-t", "commit", "-w", "--no-filters", "--", f.Name())
	if err != nil {
		return "", fmt.Errorf("worktree: writing the start commit: %w", err)
	}
	return id, nil
}
