package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	delivery "github.com/reinhq/rein/internal/run"
)

// newRunAuditCmd is `rein run audit [RUN] [--json]`: the run's facts recomputed from its
// ledgers, artifacts and git alone; exit 4 naming the first violation.
func newRunAuditCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use: "audit [RUN]", Short: "Recompute a run's isolation, binding and lock facts from its ledgers, artifacts and git; exit 4 on the first violation",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := runTarget(e, args)
			if err != nil {
				return err
			}
			rep, err := delivery.Audit(context.Background(), env, id)
			if rep == nil {
				return err
			}
			if asJSON {
				data, jerr := json.MarshalIndent(rep, "", "  ")
				if jerr != nil {
					return jerr
				}
				fmt.Fprintf(e.stdout, "%s\n", data)
			} else {
				rep.WriteText(e.stdout)
			}
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the audit as JSON")
	return c
}
