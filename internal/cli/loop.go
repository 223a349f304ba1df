package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/loop"
	"github.com/reinhq/rein/internal/system"
)

// loopEnv is the loop environment of this process: rounds' agents from the composition root.
func loopEnv(e *env) (loop.Env, error) {
	home, err := system.Home(e.getenv)
	if err != nil {
		return loop.Env{}, err
	}
	return loop.Env{Home: home, Agents: stageAgents(e, home, nil), Runs: &loopRuns{e: e}}, nil
}

// loopTarget is the loop environment and the loop a command names (its one argument, else
// the latest loop).
func loopTarget(e *env, args []string) (loop.Env, string, error) {
	env, err := loopEnv(e)
	if err != nil {
		return env, "", err
	}
	id, err := loopArg(env, args)
	return env, id, err
}

// loopArg is the loop named by args, else the newest.
func loopArg(env loop.Env, args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	return loop.Latest(env.Home)
}

func newLoopCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "loop",
		Short: "External loops: validate, start, run, status, approve, reject, raise, abort",
		Long: `An external loop runs rounds toward a goal under a control contract (see README, "Loops"):
rein runs the contract's verification itself after every round, chooses the next state by code,
checkpoints, and stops at budgets, repeated root causes and human gates.`,
	}
	c.AddCommand(newLoopValidateCmd(e), newLoopStartCmd(e), newLoopRunCmd(e), newLoopStatusCmd(e),
		newLoopApproveCmd(e), newLoopRejectCmd(e), newLoopRaiseCmd(e), newLoopAbortCmd(e))
	c.AddCommand(newLoopServeCmd(e))
	c.AddCommand(newLoopRelockCmd(e))
	return c
}

func newLoopValidateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use: "validate FILE", Short: "Check a loop contract; print it normalized, with its digest",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := loop.LoadContract(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "contract: %s\ndigest: %s\n%s\n", args[0], c.Digest, c.Normalized.JSON())
			return nil
		},
	}
}

func newLoopStartCmd(e *env) *cobra.Command {
	var trigger, run string
	var m loop.ModelRef
	cmd := &cobra.Command{
		Use: "start FILE [--trigger manual|'every DURATION'|'watch PATH...'|webhook] --provider NAME [--model ID] [--script FILE] [--run RUN]", Short: "Lock a contract and create a loop (ready)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := loopEnv(e)
			if err != nil {
				return err
			}
			ws, err := os.Getwd()
			if err != nil {
				return err
			}
			id, err := loop.Start(env, loop.StartOptions{File: args[0], Workspace: ws, Trigger: trigger, Model: m, Run: run})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "loop: %s\nstate: ready (run it with `rein loop run %s`)\n", id, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&trigger, "trigger", "", "manual, 'every DURATION', 'watch PATH...' or webhook: must say what the contract's trigger says (default: the contract's)")
	cmd.Flags().StringVar(&m.Provider, "provider", "", "the rounds' model provider")
	cmd.Flags().StringVar(&m.Model, "model", "", "the rounds' model id")
	cmd.Flags().StringVar(&m.BaseURL, "base-url", "", "base URL of an OpenAI-compatible server")
	cmd.Flags().StringVar(&m.Script, "script", "", "scenario file of the script provider (relative to the workspace)")
	cmd.Flags().StringVar(&run, "run", "", "the delivery run a delivery_run goal names (rein run start prints its id)")
	return cmd
}

func newLoopRunCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use: "run [LOOP]", Short: "Run rounds until the loop is not ready; print its status",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := loopTarget(e, args)
			if err != nil {
				return err
			}
			if _, err := loop.Run(e.ctx, env, id); err != nil {
				return err
			}
			return loopReport(e, env, id, false)
		},
	}
}

// loopReport prints a loop's status; blocked and waiting loops are ErrBlocked (exit 4).
func loopReport(e *env, env loop.Env, id string, asJSON bool) error {
	rep, err := loop.Status(env, id)
	if err != nil {
		return err
	}
	if asJSON {
		data, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", data)
	} else {
		rep.WriteText(e.stdout)
	}
	if rep.State == loop.StateBlocked || rep.State == loop.StateWaitingForHuman {
		return &reportedError{fmt.Errorf("%w: loop %s is %s (%s)", loop.ErrBlocked, id, rep.State, rep.Reason)}
	}
	return nil
}

func newLoopStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "status [LOOP] [--json]", Short: "Show a loop's state, rounds, verification, gates (writes nothing)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, id, err := loopTarget(e, args)
			if err != nil {
				return err
			}
			return loopReport(e, env, id, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func newLoopApproveCmd(e *env) *cobra.Command {
	var gate, approver string
	cmd := &cobra.Command{
		Use: "approve LOOP --gate ID", Short: "Run a held action once, as rein, and make the loop ready",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, who, err := loopDecision(e, gate, approver)
			if err != nil {
				return err
			}
			exit, err := loop.Approve(e.ctx, env, args[0], gate, who)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "gate %s approved by %s; the action ran once (exit %d)\n", gate, who, exit)
			return nil
		},
	}
	cmd.Flags().StringVar(&gate, "gate", "", "the gate's id (rein loop status names it)")
	cmd.Flags().StringVar(&approver, "approver", "", approverHelp)
	return cmd
}

func newLoopRejectCmd(e *env) *cobra.Command {
	var gate, approver, reason string
	cmd := &cobra.Command{
		Use: "reject LOOP --gate ID --reason TEXT", Short: "Refuse a held action; the reason is the next round's evidence",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, who, err := loopDecision(e, gate, approver)
			if err != nil {
				return err
			}
			if err := loop.Reject(env, args[0], gate, who, reason); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "gate %s rejected by %s\n", gate, who)
			return nil
		},
	}
	cmd.Flags().StringVar(&gate, "gate", "", "the gate's id (rein loop status names it)")
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	cmd.Flags().StringVar(&approver, "approver", "", approverHelp)
	return cmd
}

func loopDecision(e *env, gate, approver string) (loop.Env, string, error) {
	if gate == "" {
		return loop.Env{}, "", fmt.Errorf("%w: --gate ID is required", ErrUsage)
	}
	env, err := loopEnv(e)
	if err != nil {
		return env, "", err
	}
	ws, _ := os.Getwd()
	who, err := approverOr(e, ws, approver)
	return env, who, err
}

func newLoopRaiseCmd(e *env) *cobra.Command {
	var budget []string
	var approver string
	cmd := &cobra.Command{
		Use: "raise LOOP --budget KEY=VALUE[,KEY=VALUE]", Short: "Raise a loop's budget (recorded with its approver)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			set := map[string]string{}
			for _, kv := range budget {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("%w: --budget %q is not KEY=VALUE (rounds, tokens, cost_usd, elapsed)", ErrUsage, kv)
				}
				set[k] = v
			}
			if len(set) == 0 {
				return fmt.Errorf("%w: --budget KEY=VALUE is required", ErrUsage)
			}
			env, who, err := loopDecision(e, "-", approver)
			if err != nil {
				return err
			}
			if err := loop.Raise(env, args[0], set, who); err != nil {
				return err
			}
			return loopReport(e, env, args[0], false)
		},
	}
	cmd.Flags().StringSliceVar(&budget, "budget", nil, "new limits: rounds=N, tokens=N, cost_usd=X, elapsed=DURATION")
	cmd.Flags().StringVar(&approver, "approver", "", approverHelp)
	return cmd
}

func newLoopAbortCmd(e *env) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use: "abort LOOP", Short: "End a loop for good",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := loopEnv(e)
			if err != nil {
				return err
			}
			if err := loop.Abort(env, args[0], reason); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "loop %s aborted\n", args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "aborted by a person", "why")
	return cmd
}
