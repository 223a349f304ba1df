package cli_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/cli"
)

// TestMistypedCommandCallsNoModel runs rein on a scenario whose first turn writes marker.txt:
// a first argument one edit from a command is refused with a suggestion and exit 2 before any
// model is called; -p, "--" and a real prompt still reach the model.
func TestMistypedCommandCallsNoModel(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("REIN_HOME", filepath.Join(dir, "home"))
	scenario := "version: 1\nturns:\n  - calls: [{name: write, args: {path: marker.txt, content: \"model called\\n\"}}]\n  - text: done\n"
	if err := os.WriteFile("marker.yaml", []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := cli.Main(context.Background(), append([]string{"--script", "marker.yaml", "--no-session"}, args...), strings.NewReader(""), &stdout, &stderr)
		return code, stderr.String()
	}
	called := func() bool {
		t.Helper()
		_, err := os.Stat("marker.txt")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err == nil {
			if err := os.Remove("marker.txt"); err != nil {
				t.Fatal(err)
			}
		}
		return err == nil
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sesion", "ls"}, `unknown command "sesion"; did you mean "session"?`},
		{[]string{"profle", "approve"}, `unknown command "profle"; did you mean "profile"?`},
		{[]string{"contxt"}, `unknown command "contxt"; did you mean "context"?`},
		{[]string{"sesison", "ls"}, `did you mean "session"?`}, // a transposition
		{[]string{"runs"}, `did you mean "run"?`},              // an insertion
		{[]string{"Stats"}, `did you mean "stats"?`},           // case
		{[]string{"completon", "bash"}, `did you mean "completion"?`},
		{[]string{"--mode", "json", "sesion"}, `did you mean "session"?`},
	} {
		code, stderr := run(c.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "rein -p") {
			t.Errorf("rein %s: exit %d, stderr %q; want exit %d and %q with the -p hint", strings.Join(c.args, " "), code, stderr, cli.ExitUsage, c.want)
		}
		if called() {
			t.Errorf("rein %s: the model was called", strings.Join(c.args, " "))
		}
	}
	for _, args := range [][]string{
		{"-p", "sesion", "ls"},
		{"--print", "contxt"},
		{"--", "sesion", "ls"},
		{"fix the tests"},
		{"fix", "the", "tests"},
	} {
		if code, stderr := run(args...); code != cli.ExitOK {
			t.Errorf("rein %s: exit %d, want 0 (%s)", strings.Join(args, " "), code, stderr)
		}
		if !called() {
			t.Errorf("rein %s: the prompt never reached the model", strings.Join(args, " "))
		}
	}
}

// TestMistypedSubcommand pins exit 2 with a suggestion for an unknown subcommand of every
// command that groups subcommands, and help (exit 0) for such a command alone.
func TestMistypedSubcommand(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("REIN_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"session", "sho", "x"}, `unknown command "sho" for "rein session"; did you mean "show"?`},
		{[]string{"session", "vreify"}, `did you mean "verify"?`},
		{[]string{"auth", "st"}, `did you mean "set"?`},
		{[]string{"profile", "aprove"}, `unknown command "aprove" for "rein profile"; did you mean "approve"?`},
		{[]string{"run", "strt"}, `unknown command "strt" for "rein run"; did you mean "start"?`},
		{[]string{"run", "sttaus"}, `did you mean "status"?`},
		{[]string{"run", "sta"}, `did you mean "start" or "status"?`}, // cobra's prefix suggestion
		{[]string{"completion", "bsh"}, `did you mean "bash" or "zsh"?`},
		{[]string{"run", "frobnicate"}, `unknown command "frobnicate" for "rein run" (see rein run --help)`},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr)
		if code != cli.ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("rein %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr.String(), cli.ExitUsage, c.want)
		}
	}
	for _, args := range [][]string{{"run"}, {"profile"}, {"completion"}} {
		var stdout, stderr bytes.Buffer
		if code := cli.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != cli.ExitOK || !strings.Contains(stdout.String(), "Available Commands:") {
			t.Errorf("rein %s: exit %d, stdout %q; want its help and exit 0", args[0], code, stdout.String())
		}
	}
}
