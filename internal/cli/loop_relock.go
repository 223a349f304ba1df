package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/loop"
)

// newLoopRelockCmd is `rein loop relock LOOP [--approver WHO]`: a person adopts the changed
// contract file as the loop's contract, a recorded decision.
func newLoopRelockCmd(e *env) *cobra.Command {
	var approver string
	cmd := &cobra.Command{
		Use:   "relock LOOP [--approver WHO]",
		Short: "Adopt a loop's changed contract file (drift) as its contract, a recorded decision",
		Long: `The contract is locked when the loop starts (its digest in the loop ledger's header). A changed
contract file is drift: rein loop run blocks (contract_drift) and rein loop status says so. Either
restore the file, or relock: the changed contract must validate and keep the loop's trigger; an
immutable contract.relocked record holds the old and new digests, the approver, the fields that
changed and every budget and human-gate change, and the loop goes back to the state it had before
the drift.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, who, err := loopDecision(e, "-", approver)
			if err != nil {
				return err
			}
			a, err := loop.Relock(env, args[0], who)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "loop %s relocked to contract %s\n", args[0], a.NewDigest)
			loop.WriteAmendment(e.stdout, a)
			return loopReport(e, env, args[0], false)
		},
	}
	cmd.Flags().StringVar(&approver, "approver", "", approverHelp)
	return cmd
}
