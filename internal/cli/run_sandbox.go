package cli

import (
	"github.com/reinhq/rein/internal/sandbox"

	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/system"
)

// sandboxHelp is the help of `rein run next|resume --sandbox`.
const sandboxHelp = "run the run's approved commands (the writer's run_command, Ticket and Full Run Verification) in a bubblewrap sandbox: no network, only the worktree or clean checkout writable, $REIN_HOME hidden (fails if bwrap is missing); recorded in the run: every later invocation sandboxes too"

// sandboxCommands sets env's OS sandbox for approved commands when --sandbox or the global
// settings' "sandbox" asks for one; it fails (exit 2) when bubblewrap cannot build one here.
// Without either, env can still build one (env.NewSandbox): the run engine does so for a run
// whose ledger recorded the sandbox decision (delivery.KindSandbox), and stops — exit 2,
// naming the decision — when bubblewrap cannot; so a run sandboxed once is sandboxed to its
// end.
func sandboxCommands(env *delivery.Env, requested bool) error {
	home := env.Home
	env.NewSandbox = func() (func(string) (*sandbox.Sandbox, error), error) { return system.CommandSandboxes(home, true) }
	sb, err := system.CommandSandboxes(home, requested)
	if err != nil {
		return err
	}
	env.Sandbox = sb
	if sb != nil && !requested {
		env.SandboxBy = "settings"
	}
	return nil
}
