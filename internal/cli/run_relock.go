package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	delivery "github.com/reinhq/rein/internal/run"
)

// newRelockCmd is `rein run relock RUN --input NAME [--approver WHO]`: a person adopts a
// drifted input into the run's lock, and the stages that read it re-run.
func newRelockCmd(e *env) *cobra.Command {
	var input, by string
	c := &cobra.Command{
		Use:   "relock RUN --input NAME [--approver WHO]",
		Short: "Adopt a drifted input (guidance:PATH, skill:NAME, profile, harness) into the run's lock, a recorded decision; the stages that read it re-run",
		Long: `A relock is a person's decision to continue a run on a drifted input as it is now. It writes an
immutable execution-lock amendment (.rein/runs/<run>/execution-lock-amendment-<n>.md) and a
lock.amended ledger record with the input, its old and new digests and the approver; every
artifact made from what changed, everything downstream of it and every gate approval that no
longer holds is marked stale, and the run goes back to the earliest affected stage, so exactly
those stages re-run with rein run next. NAME is the blocker's input in rein run status. A
profile relock needs the edited profile approved first (rein profile approve); a harness relock
adopts the rein binary that runs it. The requirement, the workflow and the execution lock
itself are never relocked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if input == "" {
				return fmt.Errorf("%w: rein run relock needs --input NAME (the blocker's input in `rein run status %s`)", ErrUsage, args[0])
			}
			root, err := projectRoot()
			if err != nil {
				return err
			}
			who, err := approverOr(e, root, by)
			if err != nil {
				return err
			}
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			res, err := delivery.Relock(env, args[0], input, who)
			if res.Artifact.Path == "" {
				return err
			}
			writeRelock(e, args[0], res)
			var be *delivery.BlockedError
			if errors.As(err, &be) {
				return fmt.Errorf("relocked %s, but the run is still blocked: %w", input, err)
			}
			return err
		},
	}
	c.Flags().StringVar(&input, "input", "", "the drifted input: guidance:PATH, skill:NAME, profile or harness (the blocker's input)")
	c.Flags().StringVar(&by, "approver", "", approverHelp)
	return c
}

func writeRelock(e *env, id string, res delivery.RelockResult) {
	fmt.Fprintf(e.stdout, "relocked %s: %s -> %s by %s\namendment: %s (digest %s)\n", res.Input, res.OldDigest, res.NewDigest, res.Approver, res.Artifact.Path, res.Artifact.Digest)
	if len(res.Changed) > 0 {
		fmt.Fprintf(e.stdout, "changed: %s\n", strings.Join(res.Changed, ", "))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	if res.RestartStage == "" {
		fmt.Fprintf(e.stdout, "nothing is stale: no stage had used what changed; the run stays at its stage\n")
		return
	}
	fmt.Fprintf(e.stdout, "stale: %s\n", strings.Join(res.Stale, ", "))
	if len(res.Gates) > 0 {
		fmt.Fprintf(e.stdout, "gate approvals no longer valid (approve again when the gate is reached): %s\n", strings.Join(res.Gates, ", "))
	}
	fmt.Fprintf(e.stdout, "the run is back at %s: `rein run next %s` re-runs it\n", res.RestartStage, id)
}
