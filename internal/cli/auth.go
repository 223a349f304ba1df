package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
)

func newAuthCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "auth",
		Short: "Manage API keys in $REIN_HOME/auth.json (mode 0600)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return fmt.Errorf("%w: rein auth needs a subcommand: set PROVIDER or ls", ErrUsage)
		},
	}
	c.AddCommand(&cobra.Command{
		Use:   "set PROVIDER",
		Short: "Store PROVIDER's API key, read from stdin (keys are never taken as arguments)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == llm.ProviderScript {
				return fmt.Errorf("%w: the script provider needs no key: it replays a local scenario file (rein --script FILE)", ErrUsage)
			}
			if !system.TakesKey(args[0]) {
				return fmt.Errorf("%w: unknown provider %q; providers with keys: %s", ErrUsage, args[0], strings.Join(system.KeyedProviders(), ", "))
			}
			home, err := system.Home(e.getenv)
			if err != nil {
				return err
			}
			data, err := io.ReadAll(io.LimitReader(e.stdin, 64<<10))
			if err != nil {
				return err
			}
			if err := system.SaveKey(home, args[0], string(data)); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "stored the %s key in %s/%s\n", args[0], home, system.AuthFile)
			return nil
		},
	}, &cobra.Command{
		Use:   "ls",
		Short: "Show where each provider's key comes from (never the key)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := system.Home(e.getenv)
			if err != nil {
				return err
			}
			for _, p := range system.KeyedProviders() {
				_, src, err := system.ResolveKey(home, p, "", e.getenv)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%-14s %s\n", p, src)
			}
			return nil
		},
	})
	return c
}
