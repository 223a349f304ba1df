package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
)

func newCompactCmd(e *env) *cobra.Command {
	o := &runOptions{}
	var keep int
	c := &cobra.Command{
		Use:   "compact [INSTRUCTIONS]",
		Short: "Compact a session now: summarize its older part with the model, keep the recent part verbatim",
		Long: `compact summarizes the older part of a session (the latest of this directory with -c, or
--resume ID / --session ID|PATH) into a structured summary, records a compaction entry and
keeps the most recent ~20000 tokens verbatim. The transcript stays in the ledger. Optional
INSTRUCTIONS focus the summary.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !o.resuming() {
				return fmt.Errorf("%w: say which session to compact: -c, --resume ID or --session ID|PATH", ErrUsage)
			}
			if keep < 0 {
				return fmt.Errorf("%w: --keep must not be negative", ErrUsage)
			}
			return runCompact(e, o, keep, strings.Join(args, " "))
		},
	}
	f := c.Flags()
	f.StringVar(&o.provider, "provider", "", "model provider (default: the session's)")
	f.StringVar(&o.model, "model", "", "model id (default: the session's)")
	f.StringVar(&o.baseURL, "base-url", "", "API base URL")
	f.StringVar(&o.apiKey, "api-key", "", "API key")
	f.StringVar(&o.script, "script", "", "scenario file for the script provider")
	f.BoolVarP(&o.cont, "continue", "c", false, "compact the latest session of this directory")
	f.StringVar(&o.resume, "resume", "", "compact the session with this id (or unique prefix)")
	f.StringVar(&o.sessionAt, "session", "", "compact the session with this id, or at this path")
	f.IntVar(&keep, "keep", contextpack.DefaultKeepRecentTokens, "tokens of recent conversation to keep verbatim")
	return c
}

func runCompact(e *env, o *runOptions, keep int, instructions string) error {
	home, err := system.Home(e.getenv)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	rt, err := system.Open(e.ctx, system.Options{
		Provider: o.provider, Model: o.model, BaseURL: o.baseURL, APIKey: o.apiKey, Script: o.script,
		Dir: dir, Home: home, Getenv: e.getenv, Session: o.sessionChoice(), Retry: llm.DefaultRetryPolicy,
		KeepRecent: keep, Confirm: terminalConfirm(e), Notice: notice(e),
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	s := rt.Session
	before, after, err := rt.Compact(e.ctx, instructions)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "compacted session %s: %d messages → %d (summary + %d kept)\n", s.ID(), len(before), len(after), len(after)-1)
	if summary := after[0].Text(); summary != "" {
		_, _ = io.WriteString(e.stdout, summary+"\n")
	}
	return nil
}
