package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/gitx"
	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/telemetry"
)

const approverHelp = "who decides (default: git's user.name <user.email> in the project, else $USER)"

// approverOr returns flag when it is set, else the git identity configured for the project
// (`user.name <user.email>`, either part alone when only one is set), else $USER. With none
// of them it is a usage error.
func approverOr(e *env, root, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	g := gitx.Runner{Dir: root}
	// A git that is missing or fails leaves the identity unknown: fall back to $USER.
	name, _, _ := g.ConfigGet(e.ctx, "user.name")
	email, _, _ := g.ConfigGet(e.ctx, "user.email")
	name, email = strings.TrimSpace(name), strings.TrimSpace(email)
	if strings.ContainsFunc(name+email, unicode.IsControl) {
		return "", fmt.Errorf("%w: git's user.name or user.email holds control characters; pass --approver NAME", ErrUsage)
	}
	switch {
	case name != "" && email != "":
		return name + " <" + email + ">", nil
	case name != "":
		return name, nil
	case email != "":
		return email, nil
	}
	if u := strings.TrimSpace(e.getenv("USER")); u != "" {
		return u, nil
	}
	return "", fmt.Errorf("%w: no approver: pass --approver NAME, or set git's user.name and user.email, or $USER", ErrUsage)
}

// projectRoot is the git work tree holding the current directory, or the directory itself.
func projectRoot() (string, error) { return delivery.ProjectRoot(".") }

func newProfileCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "profile",
		Short: "Draft, validate, show and approve the project profile (.rein/profile.yaml)",
		Long: `The project profile fixes what a delivery run may use: required guidance files with their
digests, verification commands, pinned skills, each role's model and budget, and the harness.
A run starts only on a valid profile whose approval names its current digest.`,
	}
	initCmd := &cobra.Command{
		Use: "init", Short: "Write a draft .rein/profile.yaml from what the repository holds",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := projectRoot()
			if err != nil {
				return err
			}
			path := filepath.Join(root, delivery.ProfilePath)
			if _, err := os.Stat(path); err == nil {
				return fmt.Errorf("%w: %s exists; edit it, or remove it to draft a new one", ErrUsage, delivery.ProfilePath)
			}
			p, err := delivery.Draft(root, version())
			if err != nil {
				return err
			}
			data, err := p.Marshal()
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote a draft %s: review it, then run `rein profile approve`\n", delivery.ProfilePath)
			return nil
		},
	}
	validateCmd := &cobra.Command{
		Use: "validate", Short: "Check .rein/profile.yaml (strict; errors name their lines)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := projectRoot()
			if err != nil {
				return err
			}
			lp, err := delivery.LoadProfile(root)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s is valid (%s)\n", delivery.ProfilePath, lp.Digest)
			return nil
		},
	}
	showCmd := &cobra.Command{
		Use: "show", Short: "Print the profile, its digest and whether it is approved",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := projectRoot()
			if err != nil {
				return err
			}
			lp, err := delivery.LoadProfile(root)
			if err != nil {
				return err
			}
			st, err := delivery.CheckApproval(root, lp.Digest)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "profile: %s\ndigest: %s\napproval: %s\n\n%s", delivery.ProfilePath, lp.Digest, st.Describe(), lp.Bytes)
			return nil
		},
	}
	var approver string
	approveCmd := &cobra.Command{
		Use: "approve", Short: "Approve the current profile: records approver, time and its digest",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := projectRoot()
			if err != nil {
				return err
			}
			who, err := approverOr(e, root, approver)
			if err != nil {
				return err
			}
			a, err := delivery.Approve(root, who, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "approved %s (%s) by %s; any edit needs a new approval\n", delivery.ProfilePath, a.ProfileDigest, a.Approver)
			return nil
		},
	}
	approveCmd.Flags().StringVar(&approver, "approver", "", approverHelp)
	c.AddCommand(initCmd, validateCmd, showCmd, approveCmd)
	return c
}

// runEnv is the delivery-run environment of this process.
func runEnv(e *env) (delivery.Env, error) {
	home, err := system.Home(e.getenv)
	if err != nil {
		return delivery.Env{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return delivery.Env{}, err
	}
	// The binary is tens of megabytes: hash it in a stream, never holding it in memory.
	digest, err := artifact.SumFile(exe)
	if err != nil {
		return delivery.Env{}, fmt.Errorf("hashing the rein binary for the run's harness record: %w", err)
	}
	return delivery.Env{Home: home, Harness: delivery.Harness{Version: version(), BinaryDigest: string(digest)},
		Workflow: delivery.DeliveryWorkflow(), Agents: stageAgents(e, home, nil)}, nil
}

// stageAgents is how a delivery run gets the agents of its stage attempts: from the
// composition root, with the keys from the environment or auth.json (never from the profile,
// so none reaches the run ledger, status or artifacts), the global hooks (and the project's
// when trusted), and the spans of --trace.
func stageAgents(e *env, home string, tracer *telemetry.Tracer) *system.Agents {
	return &system.Agents{Home: home, Getenv: e.getenv, Tracer: tracer, Confirm: terminalConfirm(e), Notice: notice(e)}
}

// traceStages points env's stage agents at the exporter --trace names; the returned function
// flushes it.
func traceStages(e *env, env *delivery.Env, spec string) (func(), error) {
	if err := checkTrace(spec); err != nil {
		return nil, err
	}
	tracer, flush, err := startTracer(e, spec)
	if err != nil {
		return nil, err
	}
	env.Agents = stageAgents(e, env.Home, tracer)
	return flush, nil
}

func newDeliveryRunCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "run",
		Short: "Delivery runs: start, next, resume, clarify, approve, reject, status, show, diff, abort",
		Long: `A delivery run takes one requirement through fixed stages (see README, "Delivery runs"). So far:
start (snapshot, execution lock, run ledger, Preflight), next (Research, Clarification,
Specification, Ticket Planning), clarify (answers to required unknowns), approve/reject (Spec
Gate, Ticket Plan Gate, the run gate), resume (settle an attempt a crash interrupted, by
evidence, and continue; after a merge conflict resolved by hand, integrate from there), status,
audit and abort. After the tickets, next runs Manual Integration, Reconciliation, Final
Checklist and Full Run Verification.`,
	}
	var reqFile, branch string
	start := &cobra.Command{
		Use: "start --requirement FILE [--branch NAME]", Short: "Start a run on an approved profile",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if reqFile == "" {
				return fmt.Errorf("%w: rein run start needs --requirement FILE", ErrUsage)
			}
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			root, err := projectRoot()
			if err != nil {
				return err
			}
			id, err := delivery.Start(env, delivery.StartOptions{Project: root, Requirement: reqFile, Branch: branch})
			if id != "" {
				fmt.Fprintf(e.stdout, "run: %s\n", id)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "preflight passed; next stage: %s (see `rein run status %s`)\n", delivery.StageResearch, id)
			return nil
		},
	}
	start.Flags().StringVar(&reqFile, "requirement", "", "the requirement file")
	start.Flags().StringVar(&branch, "branch", "", "the delivery branch (default rein/<run-id>)")
	var asJSON bool
	status := &cobra.Command{
		Use: "status [RUN]", Short: "Show a run's stage, gates, blockers and locked inputs (never its text)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := runTarget(e, args)
			if err != nil {
				return err
			}
			rep, err := delivery.Status(env, id)
			if rep == nil {
				return err
			}
			if asJSON {
				data, _ := json.MarshalIndent(rep, "", "  ")
				fmt.Fprintf(e.stdout, "%s\n", data)
			} else {
				rep.WriteText(e.stdout)
			}
			if err != nil {
				return fmt.Errorf("%w: run %s is blocked (%d blocker(s) above)", delivery.ErrBlocked, id, len(rep.Blockers))
			}
			return nil
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	abort := &cobra.Command{
		Use: "abort RUN", Short: "Abort a run", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			if err := delivery.Abort(env, args[0], "aborted by rein run abort"); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "aborted run %s\n", args[0])
			return nil
		},
	}
	var nextTrace, resumeTrace string
	var nextSandbox, resumeSandbox bool
	nextParallel := 1
	next := &cobra.Command{
		Use: "next [RUN]", Short: "Run the run's current stage (Research, Clarification, Specification, Ticket Planning, the tickets)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := runTarget(e, args)
			if err != nil {
				return err
			}
			if nextParallel < 1 {
				return fmt.Errorf("%w: --parallel %d: at least 1 ticket runs at a time", ErrUsage, nextParallel)
			}
			if cmd.Flags().Changed("parallel") {
				env.Parallel = nextParallel // else 1, or the N the tickets were scheduled with
			}
			if err := sandboxCommands(&env, nextSandbox); err != nil {
				return err
			}
			flush, err := traceStages(e, &env, nextTrace)
			if err != nil {
				return err
			}
			defer flush()
			stage, err := delivery.Next(cmd.Context(), env, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "run: %s\nstage %s completed; see `rein run status %s`\n", id, stage, id)
			return nil
		},
	}
	resume := &cobra.Command{
		Use: "resume [RUN]", Short: "Rebuild the run from its ledger, settle an attempt a crash interrupted, and continue",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := runTarget(e, args)
			if err != nil {
				return err
			}
			if err := sandboxCommands(&env, resumeSandbox); err != nil {
				return err
			}
			flush, err := traceStages(e, &env, resumeTrace)
			if err != nil {
				return err
			}
			defer flush()
			fmt.Fprintf(e.stdout, "run: %s\n", id)
			res, err := delivery.Resume(cmd.Context(), env, id)
			for _, s := range res.Settled {
				fmt.Fprintf(e.stdout, "settled interrupted %s attempt %d: %s (%s)\n", s.Stage, s.Attempt, s.Outcome, s.Detail)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "stage %s completed; see `rein run status %s`\n", res.Stage, id)
			return nil
		},
	}
	next.Flags().StringVar(&nextTrace, "trace", "", traceUsage)
	next.Flags().IntVar(&nextParallel, "parallel", 1, "run at most N independent tickets of a batch at the same time (dependsOn order; default 1, or the N the run's tickets were scheduled with)")
	resume.Flags().StringVar(&resumeTrace, "trace", "", traceUsage)
	next.Flags().BoolVar(&nextSandbox, "sandbox", false, sandboxHelp)
	resume.Flags().BoolVar(&resumeSandbox, "sandbox", false, sandboxHelp)
	var answersFile string
	clarify := &cobra.Command{
		Use: "clarify RUN --answers FILE", Short: "Record answers to the research's unknowns and required evidence gaps (YAML or JSON: id → answer)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if answersFile == "" {
				return fmt.Errorf("%w: rein run clarify needs --answers FILE", ErrUsage)
			}
			data, err := os.ReadFile(answersFile)
			if err != nil {
				return fmt.Errorf("%w: answers: %w", ErrUsage, err)
			}
			answers, err := delivery.ParseAnswers(data)
			if err != nil {
				return err
			}
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			ref, err := delivery.Clarify(env, args[0], answers)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "recorded %d answer(s) as %s (digest %s); clarification completed, next stage: %s\n", len(answers), ref.Path, ref.Digest, delivery.StageSpecification)
			return nil
		},
	}
	clarify.Flags().StringVar(&answersFile, "answers", "", "the answers file")
	var gate, digest, reason, by string
	who := func() (string, error) {
		root, err := projectRoot()
		if err != nil {
			return "", err
		}
		return approverOr(e, root, by)
	}
	approve := &cobra.Command{
		Use: "approve RUN --gate spec|ticket-plan|run [--digest SHA256]", Short: "Approve a gate's artifact, bound to its digest (on a terminal without --digest: shows it and asks)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if gate == "" {
				return fmt.Errorf("%w: rein run approve needs --gate", ErrUsage)
			}
			who, err := who()
			if err != nil {
				return err
			}
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			d := artifact.Digest(digest)
			if d == "" {
				if d, err = gateDigest(e, env, args[0], gate); err != nil {
					return err
				}
			}
			ref, err := delivery.ApproveGate(env, args[0], gate, d, who)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "approved gate %s: %s (digest %s) by %s\n", gate, ref.Path, ref.Digest, who)
			return nil
		},
	}
	reject := &cobra.Command{
		Use: "reject RUN --gate spec|ticket-plan --reason TEXT", Short: "Reject a gate's artifact and send its stage back with the reason",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if gate == "" || reason == "" {
				return fmt.Errorf("%w: rein run reject needs --gate and --reason", ErrUsage)
			}
			who, err := who()
			if err != nil {
				return err
			}
			env, err := runEnv(e)
			if err != nil {
				return err
			}
			ref, err := delivery.RejectGate(env, args[0], gate, reason, who)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "rejected gate %s; reason recorded as %s (digest %s) by %s; `rein run next` runs %s again\n", gate, ref.Path, ref.Digest, who, delivery.GateStage(gate))
			return nil
		},
	}
	for _, c := range []*cobra.Command{approve, reject} {
		c.Flags().StringVar(&gate, "gate", "", "the gate (spec, ticket-plan or run; run cannot be rejected)")
		c.Flags().StringVar(&by, "approver", "", approverHelp)
	}
	approve.Flags().StringVar(&digest, "digest", "", "the digest of the artifact approved (sha256:…); without it, on a terminal, the artifact is shown and you are asked")
	reject.Flags().StringVar(&reason, "reason", "", "why the artifact is rejected")
	c.AddCommand(start, status, next, resume, clarify, approve, reject, abort, newRunShowCmd(e), newRunDiffCmd(e))
	c.AddCommand(newRunMetricsCmd(e))
	c.AddCommand(newRelockCmd(e))
	c.AddCommand(newRunAuditCmd(e))
	return c
}

// runTarget is the run environment and the run a command names (its one argument, else the
// project's latest run).
func runTarget(e *env, args []string) (delivery.Env, string, error) {
	env, err := runEnv(e)
	if err != nil {
		return env, "", err
	}
	id, err := runArg(env, args)
	return env, id, err
}

func runArg(env delivery.Env, args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	root, err := projectRoot()
	if err != nil {
		return "", err
	}
	return delivery.Latest(env.Home, root)
}
