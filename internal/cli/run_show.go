package cli

import (
	"fmt"
	"os"
	"path"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reinhq/rein/internal/artifact"
	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/run/view"
	"github.com/reinhq/rein/internal/termtext"
)

// newRunShowCmd is `rein run show RUN [ARTIFACT] [--raw]`: the run's artifacts, or one of them
// rendered for a person. It writes nothing anywhere. The output is plain text on a terminal
// and in a pipe alike (rein has no terminal styling), every artifact byte made visible.
func newRunShowCmd(e *env) *cobra.Command {
	var raw bool
	c := &cobra.Command{
		Use:   "show RUN [ARTIFACT] [--raw]",
		Short: "List a run's artifacts, or render one for reading (ARTIFACT: an id such as spec, or a file name)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if raw {
					return fmt.Errorf("%w: --raw shows one artifact: rein run show RUN ARTIFACT --raw", ErrUsage)
				}
				return listArtifacts(e, env, args[0])
			}
			v, err := delivery.ViewArtifact(env, args[0], args[1])
			if err != nil {
				return err
			}
			if raw {
				fmt.Fprint(e.stdout, view.Raw(v))
				return nil
			}
			text, err := view.Render(v)
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, text)
			return nil
		},
	}
	c.Flags().BoolVar(&raw, "raw", false, "print the artifact file as stored (control characters made visible)")
	return c
}

func listArtifacts(e *env, env delivery.Env, id string) error {
	list, err := delivery.Artifacts(env, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "run: %s\n\n", id)
	w := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tFILE\tDIGEST\tMADE BY")
	for _, a := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", termtext.Visible(a.ID), termtext.Visible(path.Base(a.Path)), a.Digest, a.MadeBy())
	}
	w.Flush()
	fmt.Fprintf(e.stdout, "\nread one: rein run show %s ARTIFACT (an id names its latest version; a file name, any version)\n", id)
	return nil
}

// newRunDiffCmd is `rein run diff RUN ARTIFACT [--attempt N]`: a unified diff of two rendered
// versions of an artifact. It writes nothing anywhere.
func newRunDiffCmd(e *env) *cobra.Command {
	var attempt int
	c := &cobra.Command{
		Use:   "diff RUN ARTIFACT [--attempt N]",
		Short: "What changed between two versions of an artifact (default: since the version its gate last decided on)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if attempt < 0 || cmd.Flags().Changed("attempt") && attempt == 0 {
				return fmt.Errorf("%w: --attempt is a stage attempt number, 1 or more", ErrUsage)
			}
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			p, err := delivery.DiffArtifacts(env, args[0], args[1], attempt)
			if err != nil {
				return err
			}
			old, err := view.Render(p.Old)
			if err != nil {
				return err
			}
			new, err := view.Render(p.New)
			if err != nil {
				return err
			}
			label := func(v view.Artifact, what string) string {
				return fmt.Sprintf("%s (%s%s)", path.Base(v.Path), v.MadeBy, what)
			}
			d := view.Diff(label(p.Old, "; "+p.Base), label(p.New, ""), old, new)
			if d == "" {
				fmt.Fprintf(e.stdout, "%s and %s render the same\n", termtext.Visible(p.Old.Path), termtext.Visible(p.New.Path))
				return nil
			}
			fmt.Fprint(e.stdout, d)
			return nil
		},
	}
	c.Flags().IntVar(&attempt, "attempt", 0, "compare the version stage attempt N made with the one before it")
	return c
}

// gateDigest is `rein run approve` without --digest. On a terminal (stdin, stdout and the
// prompt's stderr) it shows the artifact awaiting the gate and its digest and asks; a yes
// returns that digest, so the approval binds to what was shown (ApproveGate refuses when the
// artifact is no longer the one shown). Anywhere else it is a usage error naming --digest and
// where to find it.
func gateDigest(e *env, env delivery.Env, id, gate string) (artifact.Digest, error) {
	in, ok := e.stdin.(*os.File)
	confirm := terminalConfirm(e)
	if !ok || !term.IsTerminal(int(in.Fd())) || !isTerminal(e.stdout) || confirm == nil {
		return "", fmt.Errorf("%w: rein run approve needs --digest SHA256 when it cannot ask on a terminal; the digest awaiting approval is in `rein run status %s` (gate: %s … awaiting approval sha256:…) and in `rein run show %s %s`",
			ErrUsage, id, gate, id, gate)
	}
	if _, err := delivery.Status(env, id); err != nil {
		return "", err
	}
	v, err := delivery.GateArtifact(env, id, gate)
	if err != nil {
		return "", err
	}
	text, err := view.Render(v)
	if err != nil {
		return "", err
	}
	fmt.Fprint(e.stdout, text)
	yes, err := confirm(fmt.Sprintf("\napprove %s %s? [y/N] ", gate, v.Digest))
	if err != nil {
		return "", err
	}
	if !yes {
		return "", fmt.Errorf("%w: not approved: nothing was recorded (approve with y, or reject with `rein run reject %s --gate %s --reason TEXT`)", ErrUsage, id, gate)
	}
	return artifact.Digest(v.Digest), nil
}
