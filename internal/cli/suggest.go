package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// mistypedCommand refuses a root invocation whose first argument is one edit away from a
// command name or alias ("rein sesion ls"): without it, the typo would be sent to the model as
// a prompt, spending tokens. -p/--print and "--" force a prompt, and an argument holding
// whitespace ("fix the tests") is a prompt, never a command.
func mistypedCommand(cmd *cobra.Command, print bool, args []string) error {
	if print || len(args) == 0 || cmd.ArgsLenAtDash() == 0 || strings.ContainsAny(args[0], " \t\r\n") {
		return nil
	}
	near := nearCommands(cmd, args[0])
	if len(near) == 0 {
		return nil
	}
	return fmt.Errorf("%w: unknown command %q; did you mean %s? (to send it to the model as a prompt: rein -p %q)",
		ErrUsage, args[0], quoteList(near), strings.Join(args, " "))
}

// unknownSubcommand is the error for args given to c, a command that only groups
// subcommands: it names the nearest subcommands when there are any. usageArgs makes it a
// usage error.
func unknownSubcommand(c *cobra.Command, args []string) error {
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	near := nearCommands(c, args[0])
	if len(near) == 0 {
		near = c.SuggestionsFor(args[0]) // cobra's own: a prefix, or two edits
	}
	if len(near) > 0 {
		msg += "; did you mean " + quoteList(near) + "?"
	}
	return errors.New(msg)
}

// nearCommands returns the visible subcommands of c whose name or an alias is within one edit
// of typed (case-insensitive) but not equal to it.
func nearCommands(c *cobra.Command, typed string) []string {
	var out []string
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Deprecated != "" {
			continue
		}
		for _, name := range append([]string{sub.Name()}, sub.Aliases...) {
			if name != typed && withinOneEdit(strings.ToLower(typed), strings.ToLower(name)) {
				out = append(out, sub.Name())
				break
			}
		}
	}
	return out
}

// withinOneEdit reports whether a and b are at most one edit apart in the Damerau–Levenshtein
// sense: equal, or one insertion, deletion, substitution or transposition of adjacent runes.
func withinOneEdit(a, b string) bool {
	x, y := []rune(a), []rune(b)
	if len(x) > len(y) {
		x, y = y, x
	}
	if len(y)-len(x) > 1 {
		return false
	}
	i := 0
	for i < len(x) && x[i] == y[i] {
		i++
	}
	if i == len(x) {
		return true // equal, or y has one rune more at the end
	}
	if len(x) < len(y) {
		return string(x[i:]) == string(y[i+1:]) // one insertion
	}
	if string(x[i+1:]) == string(y[i+1:]) {
		return true // one substitution
	}
	return i+1 < len(x) && x[i] == y[i+1] && x[i+1] == y[i] && string(x[i+2:]) == string(y[i+2:]) // one transposition
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " or ")
}
