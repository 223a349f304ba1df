package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/cli"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/system"
)

// TestExitCodes pins the documented exit code of each kind of failure.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("REIN_HOME", filepath.Join(dir, "home"))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.yaml", "version: 1\nturns:\n  - text: fine\n")
	write("auth.yaml", "version: 1\nturns:\n  - error: {kind: auth, status: 401, message: bad key}\n")
	write("loop.yaml", "version: 1\nturns:\n  - {calls: [{name: ls, args: {}}]}\n  - {calls: [{name: ls, args: {}}]}\n  - {text: done}\n")
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"--script", "ok.yaml", "-p", "hi"}, cli.ExitOK},
		{[]string{"--script", "ok.yaml", "--mode", "json", "-p", "hi"}, cli.ExitOK},
		{[]string{"--bogus"}, cli.ExitUsage},
		{[]string{"-p", "hi"}, cli.ExitUsage},
		{[]string{"--script", "missing.yaml", "-p", "hi"}, cli.ExitUsage},
		{[]string{"--script", "ok.yaml", "--max-turns", "-1", "-p", "hi"}, cli.ExitUsage},
		{[]string{"--script", "auth.yaml", "-p", "hi"}, cli.ExitModel},
		{[]string{"--script", "auth.yaml", "--mode", "json", "-p", "hi"}, cli.ExitModel},
		{[]string{"--script", "loop.yaml", "--max-turns", "1", "-p", "hi"}, cli.ExitBudget},
		{[]string{"models", "extra"}, cli.ExitUsage},
		{[]string{"auth", "bogus"}, cli.ExitUsage},
		{[]string{"auth"}, cli.ExitUsage},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		got := cli.Main(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr)
		if got != c.want {
			t.Errorf("rein %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), got, c.want, stdout.String(), stderr.String())
		}
	}
	// A cancelled context is an interruption.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if got := cli.Main(ctx, []string{"--script", "loop.yaml", "-p", "hi"}, strings.NewReader(""), &stdout, &stderr); got != cli.ExitInterrupted {
		t.Errorf("cancelled run: exit %d, want %d (%s)", got, cli.ExitInterrupted, stderr.String())
	}
}

// TestExitCodesOfPolicy pins exit code 4: an undecided project that cannot be asked, and a
// call an "ask" rule held in a non-interactive run; a denial the model adapts to is exit 0.
func TestExitCodesOfPolicy(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	home := filepath.Join(dir, "home")
	t.Setenv("REIN_HOME", home)
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("push.yaml", "version: 1\nturns:\n  - {calls: [{name: bash, args: {command: git push}}]}\n  - {text: done}\n")
	write("home/settings.json", `{"permissions": {"ask": ["bash(git push *)"], "deny": ["bash(git push --force *)"]}}`)
	write("force.yaml", "version: 1\nturns:\n  - {calls: [{name: bash, args: {command: git push --force x}}]}\n  - {text: done}\n")
	run := func(args ...string) int {
		var stdout, stderr bytes.Buffer
		return cli.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	}
	if got := run("--script", "push.yaml", "--no-session", "-p", "hi"); got != cli.ExitBlocked {
		t.Errorf("ask rule, non-interactive: exit %d, want %d", got, cli.ExitBlocked)
	}
	if got := run("--script", "force.yaml", "--no-session", "-p", "hi"); got != cli.ExitOK {
		t.Errorf("deny rule: exit %d, want %d", got, cli.ExitOK)
	}
	write(".rein/SYSTEM.md", "Project prompt.\n")
	if got := run("--script", "force.yaml", "--no-session", "-p", "hi"); got != cli.ExitBlocked {
		t.Errorf("undecided project, non-interactive: exit %d, want %d", got, cli.ExitBlocked)
	}
	if got := run("--script", "force.yaml", "--no-session", "--no-trust", "-p", "hi"); got != cli.ExitOK {
		t.Errorf("--no-trust: exit %d, want %d", got, cli.ExitOK)
	}
}

// TestExitCodePrecedence pins how a chain of several conditions maps to one code: the
// outermost condition the table names decides, a condition without a code of its own lets its
// cause decide, and an interruption anywhere wins.
func TestExitCodePrecedence(t *testing.T) {
	modelErr := &llm.Error{Kind: llm.KindAuth, Status: 401, Message: "bad key"}
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"a failed check over the torn tail it found", fmt.Errorf("%w: torn: %w", cli.ErrCheckFailed, ledger.ErrTornTail), cli.ExitCheckFailed},
		{"a usage error over a changed artifact", fmt.Errorf("%w: requirement: %w", delivery.ErrUsage, artifact.ErrMismatch), cli.ExitUsage},
		{"a changed artifact alone", fmt.Errorf("stage pack: %w", artifact.ErrMismatch), cli.ExitSession},
		{"a compaction failed by the model", fmt.Errorf("%w: %w", kernel.ErrCompactionFailed, modelErr), cli.ExitModel},
		{"a compaction cancelled by a hook", fmt.Errorf("%w: not now", kernel.ErrCompactionCancelled), cli.ExitBlocked},
		{"a model error of a turn", &kernel.ModelError{Turn: 2, Err: modelErr}, cli.ExitModel},
		{"a failed record", &kernel.RecordError{Err: fmt.Errorf("append: %w", ledger.ErrFaulted)}, cli.ExitSession},
		{"a derived sentinel", fmt.Errorf("approve: %w", delivery.ErrGateDigest), cli.ExitUsage},
		{"a joined refusal", errors.Join(errors.New("first"), cli.ErrBlocked), cli.ExitBlocked},
		{"an interruption under a configuration error", fmt.Errorf("%w: reading: %w", system.ErrConfig, context.Canceled), cli.ExitInterrupted},
		{"nothing the table names", fmt.Errorf("x: %w", errors.New("plain")), cli.ExitInternal},
	}
	for _, c := range cases {
		if got := cli.ExitCode(c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d (%v)", c.name, got, c.want, c.err)
		}
	}
}

// TestExitCodeOfARefusedRecord: a record the session refused (a bug in rein, reported through
// the kernel's RecordError) is an internal error, not a broken session.
func TestExitCodeOfARefusedRecord(t *testing.T) {
	err := &kernel.RecordError{Err: fmt.Errorf("%w: entry record x: call c1 has a second result x", session.ErrInvalidRecord)}
	if got := cli.ExitCode(err); got != cli.ExitInternal {
		t.Errorf("exit %d, want %d", got, cli.ExitInternal)
	}
	// A broken ledger found while writing still reads as one.
	if got := cli.ExitCode(&kernel.RecordError{Err: fmt.Errorf("%w: %w", ledger.ErrFaulted, errors.New("EIO"))}); got != cli.ExitSession {
		t.Errorf("faulted ledger: exit %d, want %d", got, cli.ExitSession)
	}
}
