package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	delivery "github.com/reinhq/rein/internal/run"
)

// newRunMetricsCmd is `rein run metrics [RUN] [--json]`: per stage and role, the attempts,
// outcomes by cause, tokens, cost, elapsed time, request and pack bytes and contract problems
// by code, and the run's recoveries and blockers by category — read-only, no content.
func newRunMetricsCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use: "metrics [RUN]", Short: "Show a run's numbers per stage and role: attempts, causes, tokens, cost, bytes, recoveries (never its text)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := runTarget(e, args)
			if err != nil {
				return err
			}
			m, err := delivery.RunMetrics(env, id)
			if err != nil {
				return err
			}
			if !asJSON {
				m.WriteText(e.stdout)
				return nil
			}
			data, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s\n", data)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the metrics as JSON")
	return c
}
