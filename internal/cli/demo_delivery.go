package cli

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/proc"
	delivery "github.com/reinhq/rein/internal/run"
)

// The scenarios of `rein demo delivery`, one per role; the review's model differs from the
// writer's.
var (
	//go:embed demodata/delivery_workflow.yaml
	demoWorkflowScenario []byte
	//go:embed demodata/delivery_writer.yaml
	demoWriterScenario []byte
	//go:embed demodata/delivery_review.yaml
	demoReviewScenario []byte
)

const demoRequirement = "# Add and Sub\n\nPackage calc needs Add(a, b int) int and, after it, Sub(a, b int) int, each with a test.\n"

func newDemoDeliveryCmd(e *env) *cobra.Command {
	var keep, yes, sandboxed bool
	c := &cobra.Command{
		Use:   "delivery [--yes] [--keep] [--sandbox]",
		Short: "Run an offline delivery run on the script model through Delivery Ready in a throwaway git repo",
		Long: `demo delivery creates a throwaway git repository holding a small Go module and an approved
profile whose three roles are script models (the review model differs from the writer's), and
takes one requirement through every stage of a delivery run with the same engine calls the
rein run commands make: Research, Specification, the Spec Gate, Ticket Planning, the Ticket
Plan Gate, two tickets (t2 depends on t1, so its worktree starts from t1's accepted candidate
and its test calls t1's Add; t1's first candidate gets a blocking review and a second writer
attempt), Manual Integration, Reconciliation, Final Checklist, Full Run
Verification, Run Acceptance and Delivery Ready. Verification is real go test. The gates are
approved only with --yes; without it the demo stops at the Spec Gate (exit 4). It prints the
run status, the artifacts with digests, the metrics, the branch diff and the audit, and exits
0 only if go test passes on the delivery branch. It needs git and go on PATH, and no network.
With --sandbox the run's approved commands (the writer's run_command, Ticket and Full Run
Verification: go test) run in the OS sandbox, as with rein run next --sandbox; without
bubblewrap the demo fails before it starts (exit 2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemoDelivery(e, yes, keep, sandboxed)
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "approve every gate (Spec, Ticket Plan, Run Acceptance) as the demo reaches it")
	c.Flags().BoolVar(&keep, "keep", false, "keep the throwaway repository and rein home and print their paths")
	c.Flags().BoolVar(&sandboxed, "sandbox", false, "run the delivery run's approved commands (run_command, Ticket and Full Run Verification) in a bubblewrap sandbox, as `rein run next --sandbox` does (fails if bwrap is missing)")
	return c
}

func runDemoDelivery(e *env, yes, keep, sandboxed bool) error {
	if _, err := (gitx.Runner{}).Run(e.ctx, "version"); errors.Is(err, gitx.ErrNoGit) {
		return fmt.Errorf("%w: rein demo delivery needs git on PATH: %w", ErrUsage, err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("%w: rein demo delivery needs go on PATH: %w", ErrUsage, err)
	}
	base, err := os.MkdirTemp("", "rein-demo-delivery-")
	if err != nil {
		return err
	}
	repo, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
	env, err := runEnv(e)
	if err != nil {
		os.RemoveAll(base)
		return err
	}
	env.Home = home // never the user's $REIN_HOME
	// Before anything is made: without bubblewrap --sandbox fails as `rein run next --sandbox` does.
	if err := sandboxCommands(&env, sandboxed); err != nil {
		os.RemoveAll(base)
		return err
	}
	if keep {
		defer fmt.Fprintf(e.stdout, "\nkept: the repository %s and the rein home %s\n", filepath.Join(base, "repo"), filepath.Join(base, "home"))
	} else {
		defer os.RemoveAll(base)
	}
	env.Agents = stageAgents(e, home, nil)
	if err := setupDeliveryRepo(e.ctx, repo, env.Harness.Version); err != nil {
		return fmt.Errorf("setting up the demo repository: %w", err)
	}
	req := filepath.Join(base, "requirement.md")
	if err := os.WriteFile(req, []byte(demoRequirement), 0o644); err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "rein demo delivery: a throwaway repository at %s\nrequirement: %s\n", repo, firstLine(demoRequirement))
	if env.Sandbox != nil {
		fmt.Fprintf(out, "approved commands run in the OS sandbox (bubblewrap)\n")
	}
	id, err := delivery.Start(env, delivery.StartOptions{Project: repo, Requirement: req})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "run: %s\npreflight passed\n", id)
	if err := driveDemoRun(e, env, id, yes); err != nil {
		return err
	}
	return reportDemoRun(e, env, id, repo)
}

// driveDemoRun moves run id on until Delivery Ready: Next for each stage, ApproveGate (only
// with yes) for each gate awaiting approval.
func driveDemoRun(e *env, env delivery.Env, id string, yes bool) error {
	out := e.stdout
	stages := map[string]delivery.WorkflowStage{}
	for _, s := range env.Workflow.Stages {
		stages[s.ID] = s
	}
	for range 4 * len(env.Workflow.Stages) {
		rep, err := delivery.Status(env, id)
		if err != nil {
			return err
		}
		if rep.Stage == delivery.StageDeliveryReady {
			fmt.Fprintf(out, "run %s reached %s\n", id, stages[rep.Stage].Name)
			return nil
		}
		if st := stages[rep.Stage]; st.Kind == delivery.KindGate {
			g, ok := awaitingGate(rep, st.Gate)
			if !ok {
				return fmt.Errorf("%w: run %s is at the %s but no artifact awaits approval (see `rein run status`)", ErrCheckFailed, id, st.Name)
			}
			if !yes {
				fmt.Fprintf(out, "\nrun %s waits at the %s for approval of %s.\nrerun with `rein demo delivery --yes` to approve every gate and go on to Delivery Ready\n", id, st.Name, g.Digest)
				return fmt.Errorf("%w: run %s waits at the %s: rein demo delivery approves gates only with --yes", ErrBlocked, id, st.Name)
			}
			ref, err := delivery.ApproveGate(env, id, st.Gate, artifact.Digest(g.Digest), "rein demo --yes")
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "approved gate %s: %s (digest %s) because --yes was given\n", st.Gate, ref.Path, ref.Digest)
			continue
		}
		stage, err := delivery.Next(e.ctx, env, id)
		if err != nil {
			if rep, _ := delivery.Status(env, id); rep != nil {
				rep.WriteText(out)
			}
			return err
		}
		fmt.Fprintf(out, "stage %s completed\n", stage)
	}
	return fmt.Errorf("%w: run %s did not reach Delivery Ready", ErrCheckFailed, id)
}

func awaitingGate(rep *delivery.Report, gate string) (delivery.GateReport, bool) {
	for _, g := range rep.Gates {
		if g.Gate == gate && g.State == "awaiting approval" {
			return g, true
		}
	}
	return delivery.GateReport{}, false
}

// reportDemoRun prints the status, the artifacts, the metrics and the branch diff of run id,
// runs go test on the delivery branch itself, and ends with the audit.
func reportDemoRun(e *env, env delivery.Env, id, repo string) error {
	out := e.stdout
	rep, err := delivery.Status(env, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== rein run status\n")
	rep.WriteText(out)
	if err := writeArtifactTree(out, filepath.Join(repo, filepath.FromSlash(delivery.RunsDir), id)); err != nil {
		return err
	}
	m, err := delivery.RunMetrics(env, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== rein run metrics\n")
	m.WriteText(out)
	testErr := demoBranchTests(e, repo, rep.Branch)
	a, auditErr := delivery.Audit(e.ctx, env, id)
	if a != nil {
		fmt.Fprintf(out, "\n== rein run audit\n")
		a.WriteText(out)
	}
	if err := errors.Join(testErr, auditErr); err != nil {
		return err
	}
	fmt.Fprintf(out, "\ndemo delivery passed: run %s is at Delivery Ready, go test passes on %s, the audit passes.\n", id, rep.Branch)
	return nil
}

// writeArtifactTree prints the run's artifact directory as a tree, each file with the sha256
// of its bytes.
func writeArtifactTree(w io.Writer, root string) error {
	fmt.Fprintf(w, "\n== artifact tree (%s, sha256 of each file)\n", filepath.Base(root))
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		indent := strings.Repeat("  ", strings.Count(filepath.ToSlash(rel), "/")+1)
		if d.IsDir() {
			fmt.Fprintf(w, "%s%s/\n", indent, d.Name())
			return nil
		}
		sum, err := artifact.SumFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s%-*s %s\n", indent, 44-len(indent), d.Name(), sum)
		return nil
	})
}

// demoBranchTests prints the diff of the delivery branch from main and runs go test on a
// checkout of the branch.
func demoBranchTests(e *env, repo, branch string) error {
	g := gitx.Runner{Dir: repo}
	diff, err := g.Run(e.ctx, "diff", "--no-color", "main", branch, "--", ".", ":(exclude).rein")
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n== diff main..%s (without .rein)\n%s", branch, diff)
	dir := filepath.Join(filepath.Dir(repo), "branch")
	if _, err := g.Run(e.ctx, "worktree", "add", "-q", "--detach", dir, branch); err != nil {
		return err
	}
	var result bytes.Buffer
	res := proc.Run(e.ctx, proc.Spec{Path: "go", Args: []string{"go", "test", "./..."}, Dir: dir,
		Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off"), Stdout: &result, Stderr: &result, KillGroupOnExit: true})
	fmt.Fprintf(e.stdout, "\nrein ran go test on %s itself:\n%s", branch, result.Bytes())
	if e.ctx.Err() != nil {
		return e.ctx.Err()
	}
	if res.Outcome != proc.Exited || res.Code != 0 {
		return fmt.Errorf("%w: go test fails on the delivery branch %s", ErrCheckFailed, branch)
	}
	return nil
}

// setupDeliveryRepo writes the demo's Go module, its scenarios and an approved profile whose
// roles are script models, and commits them on main.
func setupDeliveryRepo(ctx context.Context, repo, harness string) error {
	files := map[string][]byte{
		"go.mod":                        []byte("module example.com/calc\n\ngo 1.22\n"),
		"calc.go":                       []byte("// Package calc is a tiny arithmetic package.\npackage calc\n"),
		"AGENTS.md":                     []byte("# Rules\n\nEvery exported function has a test. Run go test ./... before submitting.\n"),
		".rein/scenarios/workflow.yaml": demoWorkflowScenario,
		".rein/scenarios/writer.yaml":   demoWriterScenario,
		".rein/scenarios/review.yaml":   demoReviewScenario,
	}
	for name, data := range files {
		path := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	p, err := delivery.Draft(repo, harness)
	if err != nil {
		return err
	}
	p.Verification = map[string]delivery.Verification{"test": {Argv: []string{"go", "test", "./..."}, Required: true}}
	for role, model := range map[string]string{delivery.RoleWorkflow: "script-workflow", delivery.RoleWriter: "script-writer", delivery.RoleReview: "script-reviewer"} {
		p.Models[role] = delivery.ModelPolicy{Provider: "script", Model: model, Script: ".rein/scenarios/" + role + ".yaml", Budget: delivery.DefaultBudget(role)}
	}
	data, err := p.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(delivery.ProfilePath)), data, 0o644); err != nil {
		return err
	}
	g := gitx.Runner{Dir: repo}
	if _, err := g.Run(ctx, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	if _, err := delivery.Approve(repo, "rein demo", time.Now()); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"config", "user.name", "rein demo"}, {"config", "user.email", "demo@rein.invalid"},
		{"add", "-A"}, {"commit", "-q", "-m", "calc: an empty package, its rules and an approved profile"},
	} {
		if _, err := g.Run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}
