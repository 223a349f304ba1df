package gitx

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
)

// metadataOnly are the subcommands that never read or write file contents through a driver;
// every other subcommand gets the driver overrides (see the package doc).
func metadataOnly(sub string) bool {
	switch sub {
	case "ls-files", "rev-parse", "check-ignore", "check-ref-format", "config", "init", "symbolic-ref", "var", "version":
		return true
	}
	return false
}

// driverKeys matches the configuration keys that name a command a repository could make git
// run on content: attribute-selected drivers and signing programs. Names are matched in the
// canonical form git prints (section and key lower-cased).
const driverKeys = `^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|gpg\.program|gpg\..+\.program|gpg\.ssh\.defaultkeycommand)$`

// trustedScope reports whether scope is a configuration scope the user owns.
func trustedScope(scope string) bool { return scope == "system" || scope == "global" }

// diffFamily are the subcommands that show diffs: they get --no-ext-diff and --no-textconv,
// so the diff is git's own whatever diff.external or a driver says.
func diffFamily(sub string) bool {
	switch sub {
	case "diff", "log", "show", "diff-files", "diff-index", "diff-tree", "whatchanged":
		return true
	}
	return false
}

// subcommand returns the index and name of args' subcommand, skipping git's global options
// (which must be written -c VALUE, -C VALUE or --opt=value); -1 when there is none.
func subcommand(args []string) (int, string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++ // the option's value
		case strings.HasPrefix(a, "-"):
		default:
			return i, a
		}
	}
	return -1, ""
}

// withDiffOptions returns args with --no-ext-diff --no-textconv after a diff-family
// subcommand, else args itself.
func withDiffOptions(args []string) []string {
	i, sub := subcommand(args)
	if !diffFamily(sub) {
		return args
	}
	return slices.Concat(args[:i+1], []string{"--no-ext-diff", "--no-textconv"}, args[i+1:])
}

// mayRunDrivers reports whether args' subcommand may run a driver (no subcommand: git only
// prints usage).
func mayRunDrivers(args []string) bool {
	i, sub := subcommand(args)
	return i >= 0 && !metadataOnly(sub)
}

// driverOverrides lists the driver keys configured outside the trusted scopes and returns the
// -c options that empty them.
func (r Runner) driverOverrides(ctx context.Context) ([]string, error) {
	args := []string{"config", "--show-scope", "--null", "--name-only", "--get-regexp", driverKeys}
	out, err := r.exec(ctx, nil, args)
	if exitedWith(err, 1) { // no key matched
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the repository's driver commands to disable them: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	var overrides []string
	fields := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	if len(fields)%2 != 0 {
		return nil, fmt.Errorf("git config --show-scope printed %d fields, want scope and name pairs", len(fields))
	}
	for i := 0; i < len(fields); i += 2 {
		scope, name := string(fields[i]), string(fields[i+1])
		if trustedScope(scope) {
			continue
		}
		if strings.ContainsAny(name, "=\n") {
			return nil, fmt.Errorf("the %s configuration defines %q, which git -c cannot override; rein runs no git in this repository until the key is renamed or removed", scope, name)
		}
		overrides = append(overrides, "-c", name+"=")
	}
	return overrides, nil
}
