package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/reinhq/rein/internal/lazy"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/termtext"
)

// Version is rein's version; release builds set it with -ldflags "-X".
var Version = ""

// version is Version, or the module version the build recorded, or "dev"; read once (the
// build information is parsed, every dependency's line of it, on each read).
func version() string { return versionOnce.Get(readVersion) }

var versionOnce lazy.Value[string]

func readVersion() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// env is what every command may use from the outside world.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// Main runs rein with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	root := newRootFor(e, needsTree(args))
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code := ExitCode(err)
	var reported *reportedError
	if err != nil && !errors.As(err, &reported) {
		fmt.Fprintf(stderr, "rein: %s\n", termtext.Visible(err.Error()))
	}
	return code
}

// reportedError wraps an error that was already shown to the user (e.g. in a JSON result).
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// newRoot builds rein's whole command tree.
func newRoot(e *env) *cobra.Command { return newRootFor(e, true) }

// newRootFor builds the root command, with its subcommands when full is set. Without them
// (args that can only run the root command, see needsTree) the root command runs as it does in
// the whole tree, and adds them itself before it looks for a mistyped command name.
func newRootFor(e *env, full bool) *cobra.Command {
	o := &runOptions{}
	root := &cobra.Command{
		Use:   "rein [flags] [prompt]",
		Short: "rein runs coding agents whose context is a controlled, verifiable input",
		Long: `rein runs a coding agent: a model that reads, writes and runs code in the current directory
through confined tools, until it is done or a budget is reached.

  rein -p "fix the failing test"      print mode: the final answer on stdout
  rein --mode json -p "..."           every event as a JSON line, a result record last
  rein --mode rpc                     JSON commands on stdin, responses and events on stdout
  rein context -p "..."               what the next request would carry, without calling a model
  rein demo                           an offline end-to-end demo on the script model`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !full && !o.print && len(args) > 0 {
				full = true
				addSubcommands(e, cmd)
			}
			if err := mistypedCommand(cmd, o.print, args); err != nil {
				return err
			}
			if wantsUI(e, cmd, o, args) {
				return runUI(e, o)
			}
			return runPrompt(e, o, args)
		},
	}
	if full {
		// The version flag is the tree's: needsTree sends every args asking for it there.
		root.Version = version()
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetVersionTemplate("rein {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w: %w (see rein --help)", ErrUsage, err)
	})
	o.register(root)
	if full {
		addSubcommands(e, root)
	}
	usageArgs(root)
	return root
}

// addSubcommands adds rein's commands to root. cobra would add its help and completion
// commands when the command runs; adding them now puts them in the tree that usageArgs
// hardens and the README test walks. The completion command captures the output writer
// here, so SetOut comes first.
func addSubcommands(e *env, root *cobra.Command) {
	root.AddCommand(newModelsCmd(e), newAuthCmd(e), newDemoCmd(e), newSessionCmd(e), newContextCmd(e), newCompactCmd(e), newTrustCmd(e), newStatsCmd(e), newProfileCmd(e), newDeliveryRunCmd(e), newMCPCmd(e), newLoopCmd(e))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
}

// topCommands are the names and aliases of the root's subcommands, cobra's help and
// completion commands and its hidden completion requests (TestTopCommandsAreTheTree keeps
// them equal to the tree).
var topCommands = []string{"models", "auth", "demo", "session", "context", "compact", "trust", "stats", "profile",
	"run", "mcp", "loop", "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd}

// needsTree reports whether args may need more than the root command and its flags: an
// argument before "--" that names a subcommand, asks for help or the version (whose texts
// list the subcommands), or groups short flags (which may hold -h or -v). Building the ~90
// commands of the tree with their flags is most of the CLI's own start-up cost, and a
// prompt does not need them. It may answer true for args that do not need the tree (a flag
// value that reads like a command name); it never answers false for args that do.
func needsTree(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case slices.Contains(topCommands, a), a == "-h", a == "-v", strings.HasPrefix(a, "--help"), strings.HasPrefix(a, "--version"):
			return true
		case len(a) > 2 && a[0] == '-' && a[1] != '-':
			return true
		}
	}
	return false
}

// usageArgs makes every argument-count error of c and its subcommands a usage error. A command
// that only groups subcommands takes no arguments, so a mistyped subcommand is refused, naming
// the nearest subcommands; without arguments it shows its help, as cobra does.
func usageArgs(c *cobra.Command) {
	check := c.Args
	if c.HasSubCommands() && c.HasParent() && (check == nil || !c.Runnable()) {
		check = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownSubcommand(cmd, args)
			}
			return nil
		}
		if !c.Runnable() {
			c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
		}
	}
	if check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return fmt.Errorf("%w: %w (see %s --help)", ErrUsage, err, cmd.CommandPath())
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}
