package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/telemetry"
)

// statsVersion is the version of the `rein stats --json` document.
const statsVersion = 1

// statsDoc is the `rein stats --json` document, a format of its own.
type statsDoc struct {
	V       int             `json:"v"`
	By      string          `json:"by"`
	Scope   string          `json:"scope"` // "project" (this directory) or "all"
	Rows    []telemetry.Row `json:"rows"`
	Total   telemetry.Row   `json:"total"`
	Skipped []statsSkipped  `json:"skipped,omitempty"`
}

type statsSkipped struct {
	Session string `json:"session"`
	Error   string `json:"error"`
}

func newStatsCmd(e *env) *cobra.Command {
	var (
		all    bool
		by     string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "stats",
		Short: "Total tokens and cost from the session ledgers of this directory (--all: of every directory)",
		Long: `rein stats totals the tokens and cost the session ledgers recorded — every model answer,
failed attempts included — grouped by model, by day (local time) or by project (the directory
a session ran in). Sessions are only read, never locked or changed. A session that cannot be
read is named on stderr and left out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dim := telemetry.Dimension(by)
			costs := telemetry.NewCosts(time.Local)
			if _, err := costs.Rows(dim); err != nil {
				return fmt.Errorf("%w: --by: %w", ErrUsage, err)
			}
			home, cwd, err := homeCwd(e)
			if err != nil {
				return err
			}
			root, scope := system.ProjectSessions(home, cwd), "project"
			if all {
				root, scope = system.SessionsRoot(home), "all"
			}
			dirs, err := system.ListSessions(root)
			if err != nil {
				return err
			}
			doc := statsDoc{V: statsVersion, By: by, Scope: scope}
			for _, d := range dirs {
				st, _, err := session.LoadAs(d.Dir, d.ID)
				if err != nil {
					fmt.Fprintf(e.stderr, "rein: stats: session %s left out: %v\n", d.ID, err)
					doc.Skipped = append(doc.Skipped, statsSkipped{Session: d.ID, Error: err.Error()})
					continue
				}
				costs.Add(st)
			}
			doc.Rows, _ = costs.Rows(dim)
			doc.Total = costs.Total()
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(doc)
			}
			table := [][]string{{strings.ToUpper(by), "SESSIONS", "REQUESTS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST"}}
			for _, r := range append(doc.Rows, doc.Total) {
				key := r.Key
				if key == "total" {
					key = "TOTAL"
				}
				table = append(table, []string{key, fmt.Sprint(r.Sessions), fmt.Sprint(r.Requests), fmt.Sprint(r.Input),
					fmt.Sprint(r.Output), fmt.Sprint(r.CacheRead), fmt.Sprint(r.CacheWrite), fmt.Sprintf("$%.4f", r.Cost)})
			}
			return writeTable(e.stdout, table)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "count the sessions of every directory")
	c.Flags().StringVar(&by, "by", string(telemetry.ByModel), "group by model, day or project")
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON document instead of a table")
	return c
}

// writeTable writes rows as columns two spaces apart: the first column left-aligned, the
// others (numbers) right-aligned.
func writeTable(w io.Writer, rows [][]string) error {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			switch {
			case i == 0:
				fmt.Fprintf(&b, "%-*s", width[i], c)
			default:
				fmt.Fprintf(&b, "  %*s", width[i], c)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
