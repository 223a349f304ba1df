package cli

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reinhq/rein/internal/system"
)

func newTrustCmd(e *env) *cobra.Command {
	var allow, deny, forget, show bool
	c := &cobra.Command{
		Use:   "trust [PATH] --allow|--deny|--forget|--show",
		Short: "Decide whether a project's own rein files (.rein/, .agents/skills) load",
		Long: `A project's files that configure or extend rein — .rein/settings.json (permission rules),
.rein/SYSTEM.md, .rein/APPEND_SYSTEM.md, .rein/skills/, .agents/skills/, and with the setting
trust.contextFiles "gated" also AGENTS.md and CLAUDE.md — load only once the project is
trusted. The decision is stored per project (the repository root holding PATH, default the
current directory) in $REIN_HOME/trust.json, with the digest of each of those files: when one
is added, edited or removed afterwards, none of them loads until the project is trusted again
(a terminal run asks; a non-interactive one refuses with exit code 4).

  rein trust --allow        trust the project as it is now: its files load while unchanged
  rein trust --deny         never load them (runs go on without them, with a notice)
  rein trust --forget       remove the decision: trust.mode decides again (default: ask)
  rein trust --show         show the decision and each guarded file: trusted, changed, new, removed

--trust and --no-trust decide for one run only.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, b := range []bool{allow, deny, forget, show} {
				if b {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("%w: rein trust needs exactly one of --allow, --deny, --forget, --show", ErrUsage)
			}
			home, err := system.Home(e.getenv)
			if err != nil {
				return err
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return fmt.Errorf("%w: %s is not a directory", ErrUsage, dir)
			}
			st, err := system.Trust(home, dir)
			if err != nil {
				return err
			}
			switch {
			case show:
				decision := string(st.Stored)
				if decision == "" {
					decision = "none (trust.mode " + st.Mode + " decides)"
				}
				if st.Legacy {
					decision += " (recorded without digests by an older rein: every file counts as new until `rein trust --allow`)"
				}
				fmt.Fprintf(e.stdout, "project: %s\ndecision: %s\n", st.Root, decision)
				if err := writeTrustedHooks(e, home, dir); err != nil {
					return err
				}
				if len(st.Files) == 0 {
					fmt.Fprintln(e.stdout, "guarded files: none (no decision is needed)")
					return nil
				}
				fmt.Fprintln(e.stdout, "guarded files:")
				for _, f := range st.Files {
					fmt.Fprintf(e.stdout, "  %-8s %s\n", f.State, f.Path)
				}
				return nil
			case forget:
				if err := system.SetTrust(home, dir, ""); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "forgot the decision for %s\n", st.Root)
				return nil
			}
			d := system.TrustAllow
			if deny {
				d = system.TrustDeny
			}
			if err := system.SetTrust(home, dir, d); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s: %s (stored in %s)\n", st.Root, map[system.TrustDecision]string{
				system.TrustAllow: "trusted", system.TrustDeny: "not trusted"}[d], home+string(os.PathSeparator)+system.TrustFile)
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&allow, "allow", false, "trust the project")
	f.BoolVar(&deny, "deny", false, "do not trust the project")
	f.BoolVar(&forget, "forget", false, "remove the stored decision")
	f.BoolVar(&show, "show", false, "show the stored decision and the files the trust gate guards")
	return c
}

// trustFlags are --trust and --no-trust.
type trustFlags struct{ yes, no bool }

func (t *trustFlags) register(c *cobra.Command) {
	c.Flags().BoolVar(&t.yes, "trust", false, "trust this project for this run: load its .rein/ files and project skills")
	c.Flags().BoolVar(&t.no, "no-trust", false, "do not trust this project for this run: ignore its .rein/ files and project skills")
}

func (t *trustFlags) choice() (system.TrustChoice, error) {
	switch {
	case t.yes && t.no:
		return 0, fmt.Errorf("%w: --trust and --no-trust exclude each other", ErrUsage)
	case t.yes:
		return system.TrustOnce, nil
	case t.no:
		return system.TrustNotOnce, nil
	}
	return system.TrustFromSettings, nil
}

// terminalConfirm returns a yes/no prompter that asks on stderr and reads the answer from
// stdin, or nil when either is not a terminal (a non-interactive run refuses instead of
// asking). An interrupt while waiting counts as "no" and returns the context's error.
func terminalConfirm(e *env) func(string) (bool, error) {
	in, ok1 := e.stdin.(*os.File)
	out, ok2 := e.stderr.(*os.File)
	if !ok1 || !ok2 || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil
	}
	r := bufio.NewReader(in)
	return func(question string) (bool, error) {
		fmt.Fprint(out, question)
		type answer struct {
			line string
			err  error
		}
		ch := make(chan answer, 1)
		go func() {
			line, err := r.ReadString('\n')
			ch <- answer{line, err}
		}()
		select {
		case <-e.ctx.Done():
			fmt.Fprintln(out)
			return false, e.ctx.Err()
		case a := <-ch:
			if a.err != nil && a.line == "" {
				return false, a.err
			}
			s := strings.ToLower(strings.TrimSpace(a.line))
			return s == "y" || s == "yes", nil
		}
	}
}
