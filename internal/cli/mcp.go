package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/mcp"
	"github.com/reinhq/rein/internal/strictjson"
	"github.com/reinhq/rein/internal/system"
)

func newMCPCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect and try the configured MCP servers",
		Long: `MCP servers come from the project's .mcp.json (once the project is trusted) and the
"mcpServers" key of $REIN_HOME/settings.json and .rein/settings.json. Runs offer their tools
as mcp__<server>__<tool>. These commands start the servers the way a run would (an undecided
project stays untrusted here: pass --trust to include its servers).`,
	}
	var trust bool
	open := func() (*mcp.Manager, error) {
		home, err := system.Home(e.getenv)
		if err != nil {
			return nil, err
		}
		dir, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		o := system.Options{Dir: dir, Home: home, Getenv: e.getenv, Version: version}
		if trust {
			o.Trust = system.TrustOnce
		}
		m, warnings, err := system.OpenMCP(e.ctx, o)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			fmt.Fprintf(e.stderr, "rein: mcp: %s\n", w)
		}
		return m, nil
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "Start the servers and show each one's state and tools",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			m, err := open()
			if err != nil {
				return err
			}
			defer m.Close()
			printServers(e, m)
			return nil
		},
	}
	call := &cobra.Command{
		Use:   "call SERVER TOOL [JSON]",
		Short: "Call one tool of a server with JSON arguments and print the result (debugging: no rules, no hooks)",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(_ *cobra.Command, args []string) error {
			raw := "{}"
			if len(args) == 3 {
				raw = args[2]
			}
			v, err := strictjson.Decode(raw)
			if _, obj := v.(map[string]any); err != nil || !obj {
				return fmt.Errorf("%w: the arguments must be one JSON object, e.g. '{\"path\": \"README.md\"}'", ErrUsage)
			}
			m, err := open()
			if err != nil {
				return err
			}
			defer m.Close()
			out, err := m.Call(e.ctx, args[0], args[1], json.RawMessage(raw))
			if err != nil {
				return err
			}
			for _, p := range out.Content {
				if p.Type == "image" {
					fmt.Fprintf(e.stdout, "[image %s, %d bytes]\n", p.MIMEType, len(p.Data))
					continue
				}
				fmt.Fprintln(e.stdout, p.Text)
			}
			if out.IsError {
				return fmt.Errorf("%w: the tool reported an error (isError)", ErrCheckFailed)
			}
			return nil
		},
	}
	c.PersistentFlags().BoolVar(&trust, "trust", false, "trust the project for this command (load its .mcp.json and settings)")
	c.AddCommand(list, call)
	return c
}

func printServers(e *env, m *mcp.Manager) {
	servers := m.Servers()
	if len(servers) == 0 {
		fmt.Fprintln(e.stdout, "no MCP servers configured")
		return
	}
	for _, s := range servers {
		fmt.Fprintf(e.stdout, "%s  %s  %s  %s\n", s.Name, s.State, s.Type, s.Target)
		fmt.Fprintf(e.stdout, "  from: %s\n", s.Source)
		if s.Err != nil {
			fmt.Fprintf(e.stdout, "  error: %v\n", s.Err)
		}
		if s.Instructions != "" {
			fmt.Fprintf(e.stdout, "  instructions: %d bytes (shown to the model only with \"mcp\": {\"instructions\": true})\n", len(s.Instructions))
		}
		for _, t := range s.Tools {
			ro := ""
			if t.ReadOnly {
				ro = " (read-only)"
			}
			desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
			if len(desc) > 80 {
				desc = desc[:77] + "..."
			}
			fmt.Fprintf(e.stdout, "  %s%s  %s\n", t.Name, ro, desc)
		}
	}
}
