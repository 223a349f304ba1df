package run

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/command"
	"github.com/reinhq/rein/internal/secret"
	"github.com/reinhq/rein/internal/worktree"
)

// Full Run Verification.
const (
	// ArtFullVerification is the artifact id of Full Run Verification's results.
	ArtFullVerification = "full-verification"
	// BlockFullVerificationFailed: a required verification command failed (or could not run)
	// on the delivery branch's head.
	BlockFullVerificationFailed = "run_full_verification_failed"
	// MaxVerificationTail bounds the output tail each command's result keeps.
	MaxVerificationTail = 4 << 10
)

// VerificationReport is the digest-bound content of a verification artifact: the commit
// verified in a clean checkout, every required command's result, and whether all passed.
// Ticket Verification and Full Run Verification write the same shape.
type VerificationReport struct {
	// Ticket, Attempt and Candidate name what a Ticket Verification verified (empty for Full
	// Run Verification).
	Ticket    string          `json:"ticket,omitempty"`
	Attempt   int             `json:"attempt,omitempty"`
	Candidate string          `json:"candidate,omitempty"`
	Commit    string          `json:"commit"`
	Commands  []CommandResult `json:"commands"`
	Passed    bool            `json:"passed"`
	// Sandboxed: the commands ran in the OS sandbox (Env.Sandbox).
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// CommandResult is one approved command's outcome: its id and argv, whether the profile
// requires it, its exit code (-1 when it was killed or could not start), whether it passed,
// and the tail of its output with secrets redacted (kept in artifacts; the ledger's copies
// leave it out).
type CommandResult struct {
	ID          string   `json:"id"`
	Argv        []string `json:"argv"`
	Required    bool     `json:"required,omitempty"`
	ExitCode    int      `json:"exitCode"`
	TimedOut    bool     `json:"timedOut,omitempty"`
	Error       string   `json:"error,omitempty"` // why it could not run
	DurationMs  int64    `json:"durationMs"`
	OutputBytes int64    `json:"outputBytes,omitempty"`
	OutputTail  string   `json:"outputTail,omitempty"`
	Passed      bool     `json:"passed"`
	// Sandboxed: the command ran in the OS sandbox.
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// verifyCommit runs the locked required verification commands, in id order, on a clean
// detached checkout of commit at dir (replacing one an earlier verification left) through
// the approved-command runner: fixed argv, no shell, a scrubbed environment, in env's OS
// sandbox (the checkout its only writable directory) when it asks for one. The checkout is
// removed afterwards. A program path containing "/" is taken relative to the checkout.
func verifyCommit(ctx context.Context, env Env, repo *worktree.Repo, dir, commit string, cmds map[string]Verification) (VerificationReport, error) {
	rep := VerificationReport{Commit: commit, Commands: []CommandResult{}, Passed: true}
	wt, err := repo.Checkout(ctx, dir, commit)
	if err != nil {
		return rep, fmt.Errorf("a clean checkout of %s for verification: %w", commit, err)
	}
	defer repo.Remove(context.WithoutCancel(ctx), wt.Dir)
	sb, err := commandSandbox(env, wt.Dir)
	if err != nil {
		return rep, err
	}
	rep.Sandboxed = sb != nil
	for _, id := range slices.Sorted(maps.Keys(cmds)) {
		v := cmds[id]
		if !v.Required {
			continue
		}
		c := approvedCommand(id, v, wt.Dir, sb)
		c.MaxOutput = MaxVerificationTail
		cr := CommandResult{ID: id, Argv: v.Argv, Required: true, ExitCode: -1, Sandboxed: sb != nil}
		res, err := command.Run(ctx, c)
		if err != nil {
			cr.Error = secret.Redact(err.Error())
		} else {
			cr.ExitCode, cr.TimedOut, cr.DurationMs, cr.OutputBytes = res.ExitCode, res.TimedOut, res.Duration.Milliseconds(), res.TotalBytes
			cr.OutputTail = secret.Redact(res.Output)
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		cr.Passed = cr.ExitCode == 0 && !cr.TimedOut && cr.Error == ""
		rep.Passed = rep.Passed && cr.Passed
		rep.Commands = append(rep.Commands, cr)
	}
	return rep, nil
}

// fullVerificationStage runs the required verification commands on the delivery branch's
// integrated head in a clean checkout ($REIN_HOME/worktrees/<run>/full-verification) and
// records the results as full-verification[-n].md; once they pass it writes the delivery
// summary the Run Acceptance gate decides on.
func (r *Run) fullVerificationStage() checkStage {
	return checkStage{stage: StageFullVerification, done: r.writeSummary,
		run: func(ctx context.Context, env Env, n int) (*artifact.Reference, []Blocker, error) {
			in := r.Delivery.Integration
			if in == nil || r.Lock == nil {
				return nil, nil, fmt.Errorf("%w: run %s has no recorded integration", ErrNotRunnable, r.ID)
			}
			if bs, err := r.reconcileGit(ctx, StageFullVerification); err != nil || len(bs) > 0 {
				return nil, bs, err
			}
			repo, err := worktree.OpenRepo(ctx, r.Project)
			if err != nil {
				return nil, nil, err
			}
			dir := filepath.Join(env.Home, "worktrees", r.ID, ArtFullVerification)
			rep, err := verifyCommit(ctx, env, repo, dir, in.Head, r.Lock.Verification)
			if err != nil {
				return nil, nil, err
			}
			ref, err := r.writeStageArtifact(env, ArtFullVerification, "Full Run Verification", StageFullVerification, n, rep)
			if err != nil || rep.Passed {
				return &ref, nil, err
			}
			var failed []string
			for _, c := range rep.Commands {
				if c.ExitCode != 0 || c.TimedOut || c.Error != "" {
					failed = append(failed, fmt.Sprintf("%s (exit %d%s)", c.ID, c.ExitCode, map[bool]string{true: ", timed out"}[c.TimedOut]))
				}
			}
			return &ref, []Blocker{{Code: BlockFullVerificationFailed, Stage: StageFullVerification,
				Detail: fmt.Sprintf("on the delivery branch %s at %s, required verification failed: %s; results in %s", in.Branch, in.Head, strings.Join(failed, ", "), ref.Path),
				Recovery: []string{"read the results (rein run show " + r.ID + " " + filepath.Base(ref.Path) + "); if the failure is the environment's, fix it, " + r.recheck(),
					"abort the run (rein run abort " + r.ID + ") and start a new one"}}}, nil
		}}
}
