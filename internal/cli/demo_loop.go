package cli

import (
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
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/loop"
)

//go:embed demodata/loop.yaml
var demoLoopContract []byte

//go:embed demodata/loop_scenario.yaml
var demoLoopScenario []byte

//go:embed demodata/loop_stats.go.txt
var demoLoopCode []byte

//go:embed demodata/loop_stats_test.go.txt
var demoLoopTest []byte

// demoApprover is who approves the demo's gate when --yes is given.
const demoApprover = "rein demo loop --yes"

func newDemoLoopCmd(e *env) *cobra.Command {
	var yes, keep bool
	c := &cobra.Command{
		Use:   "loop [--yes] [--keep]",
		Short: "Run an offline external-loop demo: a failing Go test fixed over rounds, a git push at a human gate",
		Long: `demo loop creates a throwaway git repository with a failing Go test and a local bare remote,
and runs an external loop (rein loop start, rein loop run) on the offline script model under a
bundled contract: round 1's fix fails rein's verification, round 2 fails with the same root
cause, round 3 fixes the test and tries to git push, which the human gate holds before it runs.
With --yes the demo approves the push (rein runs it once) and the loop continues until rein's
verification passes; without it the loop stays waiting_for_human and the demo says how to
continue. It prints the state history and the checkpoints. Exit status 0 only if the final
verification passes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemoLoop(e, yes, keep)
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "approve the held git push (as "+demoApprover+")")
	c.Flags().BoolVar(&keep, "keep", false, "keep the throwaway directory and print its path")
	return c
}

func runDemoLoop(e *env, yes, keep bool) error {
	if _, err := (gitx.Runner{}).Run(e.ctx, "version"); errors.Is(err, gitx.ErrNoGit) {
		return fmt.Errorf("%w: rein demo loop needs git on PATH: %w", ErrUsage, err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("%w: rein demo loop needs go on PATH", ErrUsage)
	}
	base, err := os.MkdirTemp("", "rein-demo-loop-")
	if err != nil {
		return err
	}
	waiting := false
	defer func() {
		if !keep && !waiting {
			os.RemoveAll(base)
		}
	}()
	repo, remote := filepath.Join(base, "repo"), filepath.Join(base, "remote.git")
	if err := setupDemoLoopRepo(e.ctx, repo, remote); err != nil {
		return fmt.Errorf("setting up the demo repository: %w", err)
	}
	contract, scenario := filepath.Join(base, "loop.yaml"), filepath.Join(base, "scenario.yaml")
	for path, data := range map[string][]byte{contract: demoLoopContract, scenario: demoLoopScenario} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	out := e.stdout
	home := filepath.Join(base, "home") // the demo never touches the user's $REIN_HOME
	env := loop.Env{Home: home, Agents: stageAgents(e, home, nil)}
	fmt.Fprintf(out, "rein demo loop: a throwaway repository at %s (remote %s)\n", repo, remote)
	fmt.Fprintf(out, "\n$ rein loop start %s --provider script --script %s\n", contract, scenario)
	id, err := loop.Start(env, loop.StartOptions{File: contract, Workspace: repo,
		Model: loop.ModelRef{Provider: llm.ProviderScript, Script: scenario}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "loop: %s\n", id)
	rep, err := demoLoopRun(e, env, id)
	if err != nil {
		return err
	}
	for rep.State == loop.StateWaitingForHuman {
		if !yes {
			waiting = true
			demoLoopHistory(out, env, id)
			fmt.Fprintf(out, "\nthe loop waits for a person; nothing was pushed. To continue (the directory %s is kept):\n", base)
			for _, g := range rep.Gates {
				fmt.Fprintf(out, "  REIN_HOME=%s rein loop approve %s --gate %s --approver NAME\n", home, id, g.ID)
			}
			fmt.Fprintf(out, "  REIN_HOME=%s rein loop run %s\nor run `rein demo loop --yes` to approve it here.\n", home, id)
			return &reportedError{fmt.Errorf("%w: loop %s is waiting_for_human (human_gate)", loop.ErrBlocked, id)}
		}
		if err := demoLoopApprove(e, env, rep, remote); err != nil {
			return err
		}
		if rep, err = demoLoopRun(e, env, id); err != nil {
			return err
		}
	}
	demoLoopHistory(out, env, id)
	if keep {
		fmt.Fprintf(out, "\nthe directory is kept at %s\n", base)
	}
	return demoLoopVerdict(out, rep)
}

// demoLoopApprove is `rein loop approve` of every pending gate, as demoApprover, with the
// remote's branch before and after.
func demoLoopApprove(e *env, env loop.Env, rep *loop.Report, remote string) error {
	out := e.stdout
	fmt.Fprintf(out, "\nremote before approval: %s\n", demoRemoteHead(e.ctx, remote))
	for _, g := range rep.Gates {
		fmt.Fprintf(out, "\n$ rein loop approve %s --gate %s --approver %q\n", rep.ID, g.ID, demoApprover)
		exit, err := loop.Approve(e.ctx, env, rep.ID, g.ID, demoApprover)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "gate %s approved; rein ran %q once (exit %d)\n", g.ID, g.Part, exit)
	}
	fmt.Fprintf(out, "remote after approval: %s\n", demoRemoteHead(e.ctx, remote))
	return nil
}

// demoLoopRun is `rein loop run ID`: rounds through the same engine calls, then the status.
func demoLoopRun(e *env, env loop.Env, id string) (*loop.Report, error) {
	fmt.Fprintf(e.stdout, "\n$ rein loop run %s\n", id)
	if _, err := loop.Run(e.ctx, env, id); err != nil {
		return nil, err
	}
	rep, err := loop.Status(env, id)
	if err != nil {
		return nil, err
	}
	rep.WriteText(e.stdout)
	return rep, nil
}

// demoLoopVerdict: exit 0 only if the loop completed with every check of its last round
// (run by rein, not the model) passing.
func demoLoopVerdict(out io.Writer, rep *loop.Report) error {
	passed := rep.State == loop.StateCompleted && len(rep.Verification) > 0
	for _, v := range rep.Verification {
		passed = passed && v.Passed
	}
	if !passed {
		return fmt.Errorf("%w: the loop ended %s (%s), not with rein's verification passing", ErrCheckFailed, rep.State, rep.Reason)
	}
	fmt.Fprintf(out, "\ndemo loop passed: %d rounds; rein's own verification passes.\n", rep.Rounds)
	return nil
}

// demoLoopHistory prints the loop's state history and its checkpoints.
func demoLoopHistory(out io.Writer, env loop.Env, id string) {
	ts, cps, err := loop.History(env, id)
	if err != nil {
		fmt.Fprintf(out, "history: %v\n", err)
		return
	}
	fmt.Fprintf(out, "\nstate history:\n")
	for _, t := range ts {
		where := "loop"
		if t.Round > 0 {
			where = fmt.Sprintf("round %d", t.Round)
		}
		fmt.Fprintf(out, "  %-8s → %s (%s)", where, t.State, t.Reason)
		if t.Detail != "" {
			fmt.Fprintf(out, ": %s", firstLine(t.Detail))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "\ncheckpoints:\n")
	for _, c := range cps {
		fmt.Fprintf(out, "  checkpoint %d: workspace %s\n", c.Round, c.Artifacts["workspace"])
		if c.CompletedScope != "" {
			fmt.Fprintf(out, "    scope: %s\n", c.CompletedScope)
		}
		for _, v := range c.Verification {
			if v.Passed {
				fmt.Fprintf(out, "    verification %s: passed\n", v.ID)
			} else {
				fmt.Fprintf(out, "    verification %s: failed, root cause %s\n", v.ID, v.Fingerprint)
			}
		}
		for _, rc := range c.RootCauses {
			fmt.Fprintf(out, "    root cause %s (%s) in rounds %v\n", rc.Fingerprint, strings.Join(rc.Signature, "; "), rc.Rounds)
		}
		if c.NextStep != "" {
			fmt.Fprintf(out, "    next step: %s\n", c.NextStep)
		}
	}
}

// demoRemoteHead names the bare remote's main branch, or says it has none.
func demoRemoteHead(ctx context.Context, remote string) string {
	b, err := (gitx.Runner{Dir: remote}).Run(ctx, "log", "-1", "--format=%h %s", "refs/heads/main", "--")
	if err != nil {
		return "no main branch"
	}
	return "main at " + strings.TrimSpace(string(b))
}

func setupDemoLoopRepo(ctx context.Context, repo, remote string) error {
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"go.mod":        []byte("module example.com/stats\n\ngo 1.22\n"),
		"stats.go":      demoLoopCode,
		"stats_test.go": demoLoopTest,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(repo, name), data, 0o644); err != nil {
			return err
		}
	}
	if _, err := (gitx.Runner{}).Run(ctx, "init", "-q", "--bare", "-b", "main", remote); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=rein demo", "-c", "user.email=demo@rein.invalid", "commit", "-q", "-m", "stats: Mean and its test"},
		{"remote", "add", "origin", remote},
	} {
		if _, err := (gitx.Runner{Dir: repo}).Run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}
