package cli

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestTopCommandsAreTheTree fails when a subcommand of the root (or an alias) is missing from
// topCommands, or topCommands names one the tree does not have: a prompt-only start builds no
// subcommands, so a name missing there would be sent to the model as a prompt.
func TestTopCommandsAreTheTree(t *testing.T) {
	root := newRoot(&env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv})
	want := map[string]bool{cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true}
	for _, c := range root.Commands() {
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			want[name] = true
		}
	}
	for name := range want {
		if !slices.Contains(topCommands, name) {
			t.Errorf("topCommands lacks %q", name)
		}
	}
	for _, name := range topCommands {
		if !want[name] {
			t.Errorf("topCommands names %q, which is not a command of the root", name)
		}
	}
}

// TestNeedsTree shows which arguments build the whole command tree: every one that may name a
// subcommand or ask for a text listing them, and none of a plain prompt.
func TestNeedsTree(t *testing.T) {
	for _, args := range [][]string{
		{"session", "ls"}, {"--model", "m", "run", "status"}, {"help"}, {"-h"}, {"--help"}, {"--help=true"},
		{"--version"}, {"-v"}, {"-ph", "x"}, {"completion", "bash"}, {cobra.ShellCompRequestCmd, ""},
	} {
		if !needsTree(args) {
			t.Errorf("needsTree(%q) = false, want true", args)
		}
	}
	for _, args := range [][]string{
		nil, {"-p", "fix the tests"}, {"--provider", "openai-compat", "--model", "mock", "--no-session", "-p", "x"},
		{"sesion", "ls"}, {"-p", "--", "session"}, {"--mode", "rpc"},
	} {
		if needsTree(args) {
			t.Errorf("needsTree(%q) = true, want false", args)
		}
	}
}

// TestPromptOnlyRootIsTheTreesRoot fails when the root built without subcommands differs from
// the whole tree's in its flags, so a prompt parses the same either way.
func TestPromptOnlyRootIsTheTreesRoot(t *testing.T) {
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}
	flags := func(c *cobra.Command) []string {
		var out []string
		for _, fs := range []interface{ FlagUsages() string }{c.Flags(), c.PersistentFlags()} {
			out = append(out, fs.FlagUsages())
		}
		return out
	}
	full, lean := newRootFor(e, true), newRootFor(e, false)
	if lean.HasSubCommands() {
		t.Fatal("a prompt-only root has subcommands")
	}
	if !slices.Equal(flags(full), flags(lean)) {
		t.Errorf("flags differ:\n%q\n%q", flags(full), flags(lean))
	}
}

// BenchmarkNewRoot measures building the command tree a start builds: the whole tree, and the
// root alone that a prompt gets.
func BenchmarkNewRoot(b *testing.B) {
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}
	for _, c := range []struct {
		name string
		full bool
	}{{"tree", true}, {"prompt", false}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				newRootFor(e, c.full)
			}
		})
	}
}
