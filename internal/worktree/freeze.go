package worktree

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/reinhq/rein/internal/gitx"
)

// identity is the fixed author and committer of every commit rein makes, with signing off:
// the user's identity and signing program play no part in a candidate.
var identity = []string{"-c", "user.name=rein", "-c", "user.email=rein@rein.invalid", "-c", "commit.gpgSign=false"}

// FreezeSpec names the attempt a candidate commit belongs to.
type FreezeSpec struct {
	Run, Ticket, Attempt string
	// Parent is the commit the attempt started from: the worktree's base for a first
	// attempt, the previous candidate's commit for an attempt that continues one.
	Parent string
}

func (s FreezeSpec) check() error {
	return checkIDs("run", s.Run, "ticket", s.Ticket, "attempt", s.Attempt)
}

// checkIDs checks name, value pairs of ids that go into commit messages: 1 to 128 bytes, no
// white space or control character (so no id can add a line or a trailer).
func checkIDs(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		v := pairs[i+1]
		if v == "" || len(v) > 128 || strings.ContainsFunc(v, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
			return fmt.Errorf("worktree: the %s id %q must be 1 to 128 bytes without spaces or control characters", pairs[i], v)
		}
	}
	return nil
}

// message is the commit message of the attempt's candidate; its trailers name the attempt.
func (s FreezeSpec) message() string {
	return fmt.Sprintf("rein: ticket %s of run %s, attempt %s\n\nRein-Run: %s\nRein-Ticket: %s\nRein-Attempt: %s\n",
		s.Ticket, s.Run, s.Attempt, s.Run, s.Ticket, s.Attempt)
}

// Frozen is a candidate commit.
type Frozen struct {
	Base   string // the worktree's base: the diff is Base..Head
	Parent string // the commit the attempt started from
	Head   string // the candidate commit
	// DiffDigest is "sha256:" and the hex sha256 of [Worktree.Diff] of Base..Head.
	DiffDigest string
	Files      []string // the paths Base..Head changes, in git's order
}

// Freeze commits the attempt's work: every tracked change and every new file that is not
// ignored, with rein's fixed identity and a message naming run, ticket and attempt. Nothing
// to commit is [CodeDiffEmpty]. HEAD must be spec.Parent; when HEAD already is this
// attempt's candidate commit (made by a Freeze interrupted before the caller recorded it)
// and the worktree is clean, that commit is returned and no second one is made. Any other
// HEAD is [CodeHeadMismatch].
func (w *Worktree) Freeze(ctx context.Context, spec FreezeSpec) (Frozen, error) {
	if err := spec.check(); err != nil {
		return Frozen{}, err
	}
	head, err := w.Head(ctx)
	if err != nil {
		return Frozen{}, err
	}
	if head != spec.Parent {
		done, err := w.isCandidateOf(ctx, head, spec)
		if err != nil {
			return Frozen{}, err
		}
		if !done {
			return Frozen{}, &Error{Code: CodeHeadMismatch, Dir: w.Dir, Want: spec.Parent, Got: head,
				Detail: "HEAD is neither the attempt's starting commit nor its candidate; something else committed in the worktree"}
		}
		return w.frozen(ctx, spec.Parent, head)
	}
	if _, err := w.git.Run(ctx, "add", "--all"); err != nil {
		return Frozen{}, fmt.Errorf("worktree: staging the changes of %s: %w", w.Dir, err)
	}
	staged, err := w.git.Run(ctx, "diff", "--cached", "--name-only", "-z", "--no-renames")
	if err != nil {
		return Frozen{}, fmt.Errorf("worktree: reading the staged changes of %s: %w", w.Dir, err)
	}
	if len(staged) == 0 {
		return Frozen{}, &Error{Code: CodeDiffEmpty, Dir: w.Dir, Want: spec.Parent,
			Detail: "the attempt changed no tracked file and added no file; a candidate needs a change"}
	}
	args := slices.Concat(identity, []string{"commit", "--quiet", "--no-verify", "--no-edit", "--cleanup=verbatim", "-m", spec.message()})
	if _, err := w.git.Run(ctx, args...); err != nil {
		return Frozen{}, fmt.Errorf("worktree: committing the candidate in %s: %w", w.Dir, err)
	}
	if head, err = w.Head(ctx); err != nil {
		return Frozen{}, err
	}
	return w.frozen(ctx, spec.Parent, head)
}

// isCandidateOf reports whether commit is spec's candidate: one parent, spec.Parent, rein's
// message for spec, and a clean worktree over it.
func (w *Worktree) isCandidateOf(ctx context.Context, commit string, spec FreezeSpec) (bool, error) {
	raw, err := w.git.Run(ctx, "cat-file", "commit", commit)
	if err != nil {
		return false, fmt.Errorf("worktree: reading commit %s: %w", short(commit), err)
	}
	header, msg, _ := bytes.Cut(raw, []byte("\n\n"))
	var parents []string
	for line := range bytes.SplitSeq(header, []byte("\n")) {
		if p, ok := bytes.CutPrefix(line, []byte("parent ")); ok {
			parents = append(parents, string(p))
		}
	}
	if len(parents) != 1 || parents[0] != spec.Parent || string(msg) != spec.message() {
		return false, nil
	}
	changes, err := w.Changes(ctx)
	return err == nil && len(changes) == 0, err
}

func (w *Worktree) frozen(ctx context.Context, parent, head string) (Frozen, error) {
	diff, err := w.Diff(ctx, w.Base, head)
	if err != nil {
		return Frozen{}, err
	}
	files, err := w.git.Run(ctx, "diff-tree", "-r", "--name-only", "-z", "--no-renames", "--no-commit-id", "--end-of-options", w.Base, head)
	if err != nil {
		return Frozen{}, fmt.Errorf("worktree: listing the files of %s..%s: %w", short(w.Base), short(head), err)
	}
	return Frozen{Base: w.Base, Parent: parent, Head: head, DiffDigest: sum(diff), Files: gitx.SplitNUL(files)}, nil
}

// Diff returns the patch from commit a to commit b: git's own diff of the bytes, with every
// option that changes its text fixed (full ids, binary patches, no rename detection, the
// myers algorithm, a/ and b/ prefixes), so the same two commits give the same bytes.
func (w *Worktree) Diff(ctx context.Context, a, b string) ([]byte, error) {
	out, err := w.git.Run(ctx, "diff-tree", "-r", "-p", "--binary", "--full-index", "--no-renames",
		"--diff-algorithm=myers", "--no-indent-heuristic", "-U3", "--src-prefix=a/", "--dst-prefix=b/",
		"--no-commit-id", "--end-of-options", a, b)
	if err != nil {
		return nil, fmt.Errorf("worktree: diffing %s..%s: %w", short(a), short(b), err)
	}
	return out, nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Candidate is a frozen candidate bound to its candidate artifact.
type Candidate struct {
	Frozen
	// ArtifactDigest is the digest of the candidate artifact the run stored for it.
	ArtifactDigest string
	// Digest is the candidate digest ([CandidateDigest]).
	Digest string
}

// Seal binds a frozen commit to its candidate artifact's digest.
func Seal(f Frozen, artifactDigest string) Candidate {
	return Candidate{Frozen: f, ArtifactDigest: artifactDigest, Digest: CandidateDigest(f.Head, f.DiffDigest, artifactDigest)}
}

// CandidateDigest is "sha256:" and the hex sha256 of the text
//
//	rein-candidate/1\nhead <head>\ndiff <diffDigest>\nartifact <artifactDigest>\n
//
// so a change of the commit, the diff or the candidate artifact changes it.
func CandidateDigest(head, diffDigest, artifactDigest string) string {
	return sum(fmt.Appendf(nil, "rein-candidate/1\nhead %s\ndiff %s\nartifact %s\n", head, diffDigest, artifactDigest))
}

// Verify re-reads the candidate from the worktree: its digest must still be the digest of
// its parts, HEAD must be its commit, the worktree clean (no modified, deleted or new file
// that is not ignored) and the diff from its base the frozen one. Anything else is
// [CodeCandidateStale], naming what changed.
func (w *Worktree) Verify(ctx context.Context, c Candidate) error {
	stale := func(detail string, files []string) error {
		return &Error{Code: CodeCandidateStale, Dir: w.Dir, Want: c.Head, Files: files, Detail: detail}
	}
	if CandidateDigest(c.Head, c.DiffDigest, c.ArtifactDigest) != c.Digest {
		return stale("the candidate record's digest is not the digest of its commit, diff and artifact", nil)
	}
	head, err := w.Head(ctx)
	if err != nil {
		return err
	}
	if head != c.Head {
		e := stale("HEAD moved off the frozen commit", nil).(*Error)
		e.Got = head
		return e
	}
	changes, err := w.Changes(ctx)
	if err != nil {
		return err
	}
	if len(changes) > 0 {
		return stale("files changed in the worktree after the candidate was frozen", changes)
	}
	diff, err := w.Diff(ctx, c.Base, c.Head)
	if err != nil {
		return err
	}
	if sum(diff) != c.DiffDigest {
		return stale("the diff from the base is not the frozen diff", nil)
	}
	return nil
}
