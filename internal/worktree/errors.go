package worktree

import (
	"errors"
	"fmt"
	"strings"
)

// Code names one condition a worktree operation refuses on. Codes are stable: the run engine
// turns them into blockers and tests match on them.
type Code string

// The codes of *[Error].
const (
	// CodeBaseMoved: the delivery branch is not at the base commit the caller recorded (drift).
	CodeBaseMoved Code = "worktree_base_moved"
	// CodeHeadMismatch: a worktree exists at the directory but its HEAD is another commit; it
	// is reported, never reset.
	CodeHeadMismatch Code = "worktree_head_mismatch"
	// CodeNotWorktree: the directory exists but is no worktree of this repository; rein
	// neither uses nor deletes it.
	CodeNotWorktree Code = "worktree_not_a_worktree"
	// CodeDiffEmpty: there is nothing to freeze: no tracked change and no new file.
	CodeDiffEmpty Code = "worktree_diff_empty"
	// CodeCandidateStale: a frozen candidate no longer matches its worktree (HEAD moved, a
	// file changed, the diff differs).
	CodeCandidateStale Code = "worktree_candidate_stale"
	// CodeMergeConflict: a ticket's commit does not merge cleanly onto the delivery branch.
	CodeMergeConflict Code = "worktree_merge_conflict"
	// CodeBranchMoved: the delivery branch is not at the commit integration started from.
	CodeBranchMoved Code = "worktree_branch_moved"
	// CodeBranchCheckedOut: the delivery branch is checked out in a worktree, whose files
	// moving the branch would leave behind.
	CodeBranchCheckedOut Code = "worktree_branch_checked_out"
	// CodeBranchExists: the branch to create exists at another commit.
	CodeBranchExists Code = "worktree_branch_exists"
	// CodeStartMismatch: a ticket worktree's HEAD does not descend from the start commit the
	// caller recorded for it, or a start commit (or a dependency's commit) does not descend
	// from the run's base.
	CodeStartMismatch Code = "worktree_start_mismatch"
	// CodeDependencyConflict: the accepted commits a ticket depends on do not merge cleanly,
	// so there is no commit it could start from.
	CodeDependencyConflict Code = "worktree_dependency_conflict"
)

// Error is a refused worktree operation: a stable code and the data that explains it.
type Error struct {
	Code Code
	// Dir is the worktree directory concerned, or the branch name for branch conditions.
	Dir string
	// Want and Got are the expected and found commits, where the condition is about one.
	Want, Got string
	// Files are the paths concerned (conflicting files, changed files), slash-separated,
	// relative to the worktree.
	Files []string
	// Tickets are the tickets concerned (the dependencies that conflict).
	Tickets []string
	// Detail says what was found and what to do.
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Code, e.Dir)
	if e.Want != "" || e.Got != "" {
		fmt.Fprintf(&b, " (want %s, found %s)", short(e.Want), short(e.Got))
	}
	if len(e.Tickets) > 0 {
		fmt.Fprintf(&b, " tickets %s", strings.Join(e.Tickets, ", "))
	}
	if len(e.Files) > 0 {
		shown := e.Files
		if len(shown) > 10 {
			shown = shown[:10]
		}
		fmt.Fprintf(&b, " [%s", strings.Join(shown, ", "))
		if len(e.Files) > len(shown) {
			fmt.Fprintf(&b, " and %d more", len(e.Files)-len(shown))
		}
		b.WriteString("]")
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is matches another *Error with the same code and no other field set, so
// errors.Is(err, &Error{Code: c}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Dir == "" && t.Want == "" && t.Got == "" && t.Files == nil && t.Tickets == nil && t.Detail == ""
}

// CodeOf returns the code of the first *Error in err's chain.
func CodeOf(err error) (Code, bool) {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code, true
	}
	return "", false
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	if id == "" {
		return "nothing"
	}
	return id
}
