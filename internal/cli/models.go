package cli

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
)

func newModelsCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "List known models: built-in entries plus $REIN_HOME/models.json",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := system.Home(e.getenv)
			if err != nil {
				return err
			}
			reg := llm.NewRegistry()
			if err := reg.LoadOverrides(filepath.Join(home, "models.json")); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROVIDER\tMODEL\tAPI\tCONTEXT\tMAX OUT\tIN $/M\tOUT $/M\tCACHE R $/M\tCACHE W $/M")
			for _, m := range reg.All() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%g\t%g\t%g\t%g\n", m.Provider, m.ID, m.API, m.ContextWindow, m.MaxOutput,
					m.Cost.Input, m.Cost.Output, m.Cost.CacheRead, m.Cost.CacheWrite)
			}
			return tw.Flush()
		},
	}
}
