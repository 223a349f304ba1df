// Package worktree is the git side of a delivery run's tickets: the delivery branch, one
// detached worktree per ticket made from a recorded base commit, the frozen candidate of a
// writer attempt and its digests, clean checkouts for verification, and the integration of
// accepted tickets into the delivery branch. It knows no run, ledger, model or tool: the run
// engine records what it returns and decides what to do about what it refuses. Every git
// call goes through internal/gitx, so no repository configuration, attribute or hook can make
// it run a command.
//
// # Worktrees
//
// [Repo.Start] computes the commit a ticket's worktree starts from, holding exactly the
// accepted work it depends on: the run's base without dependencies, the accepted commit of
// one, or a merge commit of several (merge-tree from objects alone, rein's identity, dated
// at its latest parent: the same dependencies give the same id, so a recorded start can be
// computed again); dependencies that do not merge are [CodeDependencyConflict] naming the
// tickets and files, and change nothing. [Repo.CreateAt] makes (or reuses) the ticket
// worktree at a directory the caller chooses ($REIN_HOME/worktrees/<run>/<ticket>) from
// that start, with base where the delivery branch must point ([CodeBaseMoved] otherwise:
// drift; [Repo.Create] is CreateAt from base itself). It is idempotent and safe to repeat
// after a crash: a worktree already at its start is reused as it is (uncommitted work
// included; the caller reads [Worktree.Changes]); one at another HEAD is [CodeHeadMismatch]
// and is never reset; [Repo.Open] refuses a worktree whose HEAD does not descend from the
// start it is opened with ([CodeStartMismatch]); one whose `git worktree add` was interrupted (git's "initializing" lock) or whose
// directory vanished is made again; a directory that is not a worktree of the repository is
// [CodeNotWorktree] and is neither used nor deleted. Worktrees are detached: no branch per
// ticket; each worktree's HEAD keeps its commits from garbage collection until integration
// puts them on the delivery branch. [Repo.Checkout] makes a clean detached checkout of a
// commit for verification, removing the one an earlier verification left. [Repo.List],
// [Repo.Remove] and [Repo.RemoveAll] list and remove the worktrees below a run's directory.
//
// # Candidates
//
// [Worktree.Freeze] stages every tracked change and every new file that is not ignored,
// refuses an empty change ([CodeDiffEmpty]) and commits with rein's fixed identity (rein
// <rein@rein.invalid>, no signing, no hooks) and a message whose trailers name run, ticket
// and attempt (Rein-Run, Rein-Ticket, Rein-Attempt). HEAD must be the attempt's parent (the
// base, or the previous attempt's candidate); when HEAD already is this attempt's candidate
// and the worktree is clean (a freeze that crashed before the caller recorded it) the same
// commit is returned: no second commit. The [Frozen] result names the commit, the changed
// files and the diff digest: "sha256:" and the sha256 of [Worktree.Diff] from the base (the
// worktree's start, so a dependent ticket's diff is only its own change), a
// patch whose every text-changing option is fixed (full ids, binary, no renames, myers, a/
// and b/ prefixes). [Seal] binds it to the candidate artifact's digest; the candidate digest
// ([CandidateDigest]) is the sha256 of "rein-candidate/1", HEAD, the diff digest and the
// artifact digest, so a change of any of them changes it. [Worktree.Verify] re-reads a
// candidate — digest of its parts, HEAD, a clean worktree, the diff — and answers
// [CodeCandidateStale] naming what changed.
//
// # Integration
//
// [Repo.Integrate] merges accepted candidates, in the order given (dependency order, the
// caller's), into the delivery branch, which must be at the commit the caller recorded
// ([CodeBranchMoved]) and checked out nowhere ([CodeBranchCheckedOut]: moving it would leave
// that checkout's files behind). Each merge is computed from objects alone (git merge-tree
// --write-tree) and written with commit-tree, one merge commit per ticket; no work tree or
// index is written, the project's checkout included. The branch moves once, by a
// compare-and-swap from the recorded commit to the last merge. A conflict is
// [CodeMergeConflict] with the ticket and the conflicting files, and leaves every ref and
// checkout as it was. Repeating an integration that completed returns the branch's head and
// makes nothing. A repository-defined merge driver is emptied by gitx, so git fails on a file
// it selects instead of running it: such an integration fails, the branch unchanged.
//
// # Errors
//
// A refusal is an *[Error] with a stable [Code] (errors.Is(err, &Error{Code: c}) matches)
// and its data: the directory or branch, the wanted and found commits, the files. Any other
// error is git failing, wrapped with what was being done.
package worktree
