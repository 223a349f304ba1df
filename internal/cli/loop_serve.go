package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/loop"
)

func newLoopServeCmd(e *env) *cobra.Command {
	var listen string
	var poll, debounce time.Duration
	cmd := &cobra.Command{
		Use:   "serve [LOOP] [--listen 127.0.0.1:PORT]",
		Short: "Run a round whenever the loop's trigger (watch, every) or its loopback webhook fires",
		Long: `serve holds the loop and runs one round per firing of its trigger: a watch trigger's file
changes (debounced), an every trigger's schedule, and with --listen a webhook on a loopback
address (POST / with "Authorization: Bearer TOKEN"; the token is in the loop's directory under
$REIN_HOME, created 0600 on first use). A firing while a round runs queues exactly one more
round. Every firing is recorded in the loop ledger. serve ends when the loop needs a person or
is finished, or on Ctrl-C; it prints the loop's status.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := loopTarget(e, args)
			if err != nil {
				return err
			}
			ready := func(s loop.Serving) {
				fmt.Fprintf(e.stdout, "serving loop %s (trigger: %s)\n", id, s.Trigger)
				if s.Webhook != "" {
					fmt.Fprintf(e.stdout, "webhook: POST %s with \"Authorization: Bearer $(cat %s)\"\n", s.Webhook, s.TokenFile)
				}
			}
			_, err = loop.Serve(e.ctx, env, id, loop.ServeOptions{Listen: listen, Poll: poll, Debounce: debounce, Ready: ready})
			if err != nil {
				return err
			}
			return loopReport(e, env, id, false)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "serve the webhook on this loopback address (127.0.0.1:PORT or [::1]:PORT; port 0 picks one)")
	cmd.Flags().DurationVar(&poll, "poll", loop.DefaultPoll, "watch trigger: time between looks at the watched paths")
	cmd.Flags().DurationVar(&debounce, "debounce", loop.DefaultDebounce, "watch trigger: quiet time after the last change before a burst fires once")
	return cmd
}
