package cli

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/proc"
	"github.com/reinhq/rein/internal/system"
)

//go:embed demodata/scenario.yaml
var demoScenario []byte

//go:embed demodata/stats_test.go.txt
var demoTest []byte

const demoPrompt = "Implement Mean in stats.go so that the tests in stats_test.go pass, and run the tests to prove it."

func newDemoCmd(e *env) *cobra.Command {
	var keep bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run an offline end-to-end demo: an agent on the script model fixes a Go package in a throwaway git repo",
		Long: `demo creates a throwaway git repository holding a small Go package whose tests fail, and runs
a bundled scenario on the offline script model: the agent reads the tests, writes code, runs
go test through bash, sees a failure, fixes it with edit, and sees the tests pass. rein then
runs go test itself and prints the final diff. It needs git and go on PATH, and no network
or API key. Exit status 0 only if the tests really pass at the end.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(e, keep)
		},
	}
	c.Flags().BoolVar(&keep, "keep", false, "keep the throwaway repository and print its path")
	c.AddCommand(newDemoDeliveryCmd(e))
	c.AddCommand(newDemoLoopCmd(e))
	return c
}

func runDemo(e *env, keep bool) error {
	if _, err := (gitx.Runner{}).Run(e.ctx, "version"); errors.Is(err, gitx.ErrNoGit) {
		return fmt.Errorf("%w: rein demo needs git on PATH: %w", ErrUsage, err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("%w: rein demo needs go on PATH", ErrUsage)
	}
	base, err := os.MkdirTemp("", "rein-demo-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(base)
	}
	repo := filepath.Join(base, "repo")
	if err := setupDemoRepo(e.ctx, repo); err != nil {
		return fmt.Errorf("setting up the demo repository: %w", err)
	}
	scenario := filepath.Join(base, "scenario.yaml")
	if err := os.WriteFile(scenario, demoScenario, 0o644); err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "rein demo: a throwaway repository at %s\n", repo)
	fmt.Fprintf(out, "prompt: %s\n\n", demoPrompt)

	home := filepath.Join(base, "home") // the demo never touches the user's $REIN_HOME
	rt, err := system.Open(e.ctx, system.Options{
		Provider: llm.ProviderScript, Script: scenario, Dir: repo, Home: home, Getenv: e.getenv,
		MaxTurns: 20, Observe: demoObserver(out), Notice: notice(e),
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	outcome, runErr := rt.Run(e.ctx, llm.UserText(demoPrompt))
	if outcome != nil && outcome.Final != nil {
		fmt.Fprintf(out, "\nagent: %s\n", strings.TrimSpace(outcome.Final.Text()))
	}
	if runErr != nil {
		return runErr
	}

	fmt.Fprintf(out, "\nfinal diff:\n")
	g := gitx.Runner{Dir: repo}
	_, err = g.Run(e.ctx, "add", "-A")
	var diff []byte
	if err == nil {
		diff, err = g.Run(e.ctx, "diff", "--cached", "--no-color")
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s", diff)

	var result bytes.Buffer
	res := proc.Run(e.ctx, proc.Spec{Path: "go", Args: []string{"go", "test", "./..."}, Dir: repo,
		Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off"), Stdout: &result, Stderr: &result, KillGroupOnExit: true})
	fmt.Fprintf(out, "\nrein ran go test itself:\n%s", result.Bytes())
	if e.ctx.Err() != nil {
		return e.ctx.Err()
	}
	if res.Outcome != proc.Exited || res.Code != 0 {
		return fmt.Errorf("%w: the tests do not pass at the end of the demo", ErrCheckFailed)
	}
	fmt.Fprintf(out, "\ndemo passed: %d turns, %d tool results; the tests pass.\n", outcome.Turns, countToolResults(outcome))
	if keep {
		fmt.Fprintf(out, "the repository is kept at %s\n", repo)
	}
	return nil
}

func countToolResults(o *kernel.Outcome) int {
	n := 0
	for _, m := range o.Messages {
		if m.Role == llm.RoleTool {
			n++
		}
	}
	return n
}

func setupDemoRepo(ctx context.Context, repo string) error {
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"go.mod":        []byte("module example.com/stats\n\ngo 1.22\n"),
		"stats_test.go": demoTest,
		"README.md":     []byte("# stats\n\nA tiny statistics package. `Mean` is not written yet.\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(repo, name), data, 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=rein demo", "-c", "user.email=demo@rein.invalid", "commit", "-q", "-m", "stats: tests for Mean"},
	} {
		if _, err := (gitx.Runner{Dir: repo}).Run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// demoObserver prints one line per tool call and result.
func demoObserver(w io.Writer) func(kernel.Event) {
	return func(ev kernel.Event) {
		switch ev.Type {
		case kernel.EventMessageEnd:
			if ev.Message.Role == llm.RoleAssistant {
				if t := strings.TrimSpace(ev.Message.Text()); t != "" && len(ev.Message.ToolCalls()) > 0 {
					fmt.Fprintf(w, "agent: %s\n", firstLine(t))
				}
			}
		case kernel.EventToolStart:
			fmt.Fprintf(w, "  → %s %s\n", ev.Call.Name, summarizeArgs(ev.Call.Arguments))
		case kernel.EventToolEnd:
			status := "ok"
			if ev.Message.IsError {
				status = "error"
			}
			fmt.Fprintf(w, "  ← %s: %s\n", status, firstLines(ev.Message.Text(), 6))
		}
	}
}

func summarizeArgs(args string) string {
	if len(args) > 100 {
		return args[:100] + "…"
	}
	return args
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, "\n      ")
}
