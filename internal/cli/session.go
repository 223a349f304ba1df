package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/termtext"
	"github.com/reinhq/rein/internal/wire"
)

func newSessionCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "session",
		Short: "List, show, verify, repair and export session ledgers",
		RunE: func(cmd *cobra.Command, args []string) error {
			return fmt.Errorf("%w: rein session needs a subcommand: ls, show, verify, repair or export", ErrUsage)
		},
	}
	var all bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the sessions of this directory (--all: of every directory), newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home, cwd, err := homeCwd(e)
			if err != nil {
				return err
			}
			root := system.ProjectSessions(home, cwd)
			if all {
				root = system.SessionsRoot(home)
			}
			dirs, err := system.ListSessions(root)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tUPDATED\tENTRIES\tCOST")
			for _, d := range dirs {
				st, _, err := session.LoadAs(d.Dir, d.ID)
				if err != nil {
					fmt.Fprintf(tw, "%s\t(unreadable: %v)\t%s\t-\t-\n", d.ID, err, d.Updated.Format(time.DateTime))
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\n", d.ID, orDash(st.Name()), d.Updated.Local().Format(time.DateTime), len(st.Entries), st.Usage.Cost.Total)
			}
			return tw.Flush()
		},
	}
	ls.Flags().BoolVar(&all, "all", false, "list the sessions of every directory")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session as a readable transcript, with secrets redacted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := loadSession(e, args[0])
			if err != nil {
				return err
			}
			return writeTranscript(e, "session show", st, false)
		},
	}
	verify := &cobra.Command{
		Use:   "verify ID",
		Short: "Verify a session's whole hash chain and invariants; exit 0 only if all of it verifies",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sd, err := findSession(e, args[0])
			if err != nil {
				return err
			}
			rep, err := ledger.Verify(sd.Dir, ledger.Options{})
			if errors.Is(err, ledger.ErrTornTail) || err == nil && rep.Torn != nil {
				if err == nil {
					err = ledger.ErrTornTail
				}
				return fmt.Errorf("%w: session %s ends in a torn record (a write cut short by a crash): %w; run: rein session repair %s", ErrCheckFailed, sd.ID, err, sd.ID)
			}
			if err != nil {
				return fmt.Errorf("session %s does not verify: %w", sd.ID, err)
			}
			if _, _, err := session.LoadAs(sd.Dir, sd.ID); err != nil {
				return fmt.Errorf("session %s does not verify: %w", sd.ID, err)
			}
			if err := checkAnchor(e, sd); err != nil {
				return fmt.Errorf("session %s does not verify: %w", sd.ID, err)
			}
			fmt.Fprintf(e.stdout, "ok: session %s verifies: head seq %d, hash %s\n", sd.ID, rep.HeadSeq, rep.HeadHash)
			return nil
		},
	}
	repair := &cobra.Command{
		Use:   "repair ID",
		Short: "Repair a torn tail (an incomplete last record); corruption is refused",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sd, err := findSession(e, args[0])
			if err != nil {
				return err
			}
			l, rep, err := ledger.Open(sd.Dir, ledger.Options{})
			if err != nil {
				return fmt.Errorf("session %s cannot be repaired: %w", sd.ID, err)
			}
			if err := l.Close(); err != nil {
				return err
			}
			if rep.Torn == nil {
				fmt.Fprintf(e.stdout, "session %s has no torn tail; nothing to repair (head seq %d)\n", sd.ID, rep.HeadSeq)
				return nil
			}
			for _, w := range rep.Warnings {
				fmt.Fprintf(e.stdout, "%s\n", w)
			}
			fmt.Fprintf(e.stdout, "repaired session %s: head seq %d, hash %s\n", sd.ID, rep.HeadSeq, rep.HeadHash)
			return nil
		},
	}
	var format string
	export := &cobra.Command{
		Use:   "export ID",
		Short: "Export a session as markdown or JSON, with secrets redacted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "markdown" && format != "json" {
				return fmt.Errorf("%w: --format %q: want markdown or json", ErrUsage, format)
			}
			st, _, err := loadSession(e, args[0])
			if err != nil {
				return err
			}
			return writeTranscript(e, "session export", st, format == "json")
		},
	}
	export.Flags().StringVar(&format, "format", "markdown", "markdown or json")
	c.AddCommand(ls, show, verify, repair, export)
	return c
}

// writeTranscript renders a session as markdown or JSON, redacts the secrets the scanner
// finds (see redactTranscript), names what it redacted on stderr and writes the result; on
// a scanner error nothing is written.
func writeTranscript(e *env, cmd string, st *session.State, asJSON bool) error {
	var buf strings.Builder
	render := writeMarkdown
	if asJSON {
		render = writeJSON
	}
	if err := render(&buf, st); err != nil {
		return err
	}
	out, notice, err := redactTranscript(buf.String(), asJSON)
	if err != nil {
		return err
	}
	if notice != "" {
		fmt.Fprintf(e.stderr, "rein: %s: %s\n", cmd, notice)
	}
	if !asJSON {
		// Markdown is read on a terminal: model and tool text must not drive it. (JSON
		// escapes every control character already.)
		out = termtext.Visible(out)
	}
	_, err = io.WriteString(e.stdout, out)
	return err
}

func homeCwd(e *env) (string, string, error) {
	home, err := system.Home(e.getenv)
	if err != nil {
		return "", "", err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	if real, err := realDir(cwd); err == nil {
		cwd = real
	}
	return home, cwd, nil
}

func findSession(e *env, ref string) (system.SessionDir, error) {
	home, cwd, err := homeCwd(e)
	if err != nil {
		return system.SessionDir{}, err
	}
	return system.FindSession(home, cwd, ref)
}

// checkAnchor checks the session against the head anchored when its last run ended (it only
// reads).
func checkAnchor(e *env, sd system.SessionDir) error {
	home, _, err := homeCwd(e)
	if err != nil {
		return err
	}
	l, _, err := ledger.OpenReadOnly(sd.Dir, ledger.Options{})
	if err != nil {
		return err
	}
	defer l.Close()
	return system.CheckAnchor(home, sd.Dir, sd.ID, l)
}

func loadSession(e *env, ref string) (*session.State, system.SessionDir, error) {
	sd, err := findSession(e, ref)
	if err != nil {
		return nil, sd, err
	}
	st, _, err := session.LoadAs(sd.Dir, sd.ID)
	return st, sd, err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeMarkdown(w io.Writer, st *session.State) error {
	fmt.Fprintf(w, "# Session %s\n\n", st.Header.ID)
	if n := st.Name(); n != "" {
		fmt.Fprintf(w, "Name: %s  \n", n)
	}
	if cwd := st.Header.Bindings[session.BindCwd]; cwd != "" {
		fmt.Fprintf(w, "Directory: %s  \n", cwd)
	}
	if p := st.Header.Bindings[session.BindParent]; p != "" {
		fmt.Fprintf(w, "Forked from: %s at %s  \n", p, st.Header.Bindings[session.BindParentEntry])
	}
	fmt.Fprintf(w, "Usage: %d input, %d output, %d cache read, %d cache write tokens; $%.4f\n",
		st.Usage.Input, st.Usage.Output, st.Usage.CacheRead, st.Usage.CacheWrite, st.Usage.Cost.Total)
	for _, e := range st.Conversation() {
		m := e.Message
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(w, "\n## User\n\n%s\n", m.Text())
		case llm.RoleAssistant:
			fmt.Fprintf(w, "\n## Assistant")
			if m.Model != "" {
				fmt.Fprintf(w, " (%s)", m.Model)
			}
			fmt.Fprintln(w)
			for _, p := range m.Content {
				switch p.Type {
				case llm.PartThinking:
					fmt.Fprintf(w, "\n> thinking: %s\n", strings.ReplaceAll(p.Text, "\n", "\n> "))
				case llm.PartText:
					fmt.Fprintf(w, "\n%s\n", p.Text)
				case llm.PartToolCall:
					fmt.Fprintf(w, "\n**%s** `%s`\n", p.Call.Name, p.Call.Arguments)
				}
			}
			if m.Failed() && m.Err != nil {
				fmt.Fprintf(w, "\n*%s: %s*\n", m.StopReason, m.Err.Message)
			}
		case llm.RoleTool:
			status := "result"
			if m.IsError {
				status = "error"
			}
			fmt.Fprintf(w, "\n%s of %s:\n\n```\n%s\n```\n", status, m.ToolName, strings.TrimRight(m.Text(), "\n"))
		}
	}
	return nil
}

// exportVersion is the version of the JSON export, a format of its own whose messages are
// wire messages.
const exportVersion = 1

// exportEntry is one line of the JSON export.
type exportEntry struct {
	ID      string        `json:"id"`
	Parent  string        `json:"parentId,omitempty"`
	Time    time.Time     `json:"ts"`
	Message *wire.Message `json:"message"`
}

type exportDoc struct {
	V        int           `json:"v"`
	Session  string        `json:"session"`
	Name     string        `json:"name,omitempty"`
	Cwd      string        `json:"cwd,omitempty"`
	Parent   string        `json:"parentSession,omitempty"`
	Usage    wire.Usage    `json:"usage"`
	Messages []exportEntry `json:"messages"`
}

func writeJSON(w io.Writer, st *session.State) error {
	doc := exportDoc{V: exportVersion, Session: st.Header.ID, Name: st.Name(), Cwd: st.Header.Bindings[session.BindCwd],
		Parent: st.Header.Bindings[session.BindParent], Usage: wire.NewUsage(st.Usage), Messages: []exportEntry{}}
	for _, e := range st.Conversation() {
		m := e.Message
		doc.Messages = append(doc.Messages, exportEntry{ID: e.ID, Parent: e.Parent, Time: e.Time.UTC(), Message: wire.NewMessage(&m)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// realDir resolves symlinks so that the session folder matches the workspace's own.
func realDir(dir string) (string, error) { return filepath.EvalSymlinks(dir) }
