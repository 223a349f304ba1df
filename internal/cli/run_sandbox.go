package cli

import (
	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/system"
)

// sandboxHelp is the help of `rein run next|resume --sandbox`.
const sandboxHelp = "run the run's approved commands (the writer's run_command, Ticket and Full Run Verification) in a bubblewrap sandbox: no network, only the worktree or clean checkout writable, $REIN_HOME hidden (fails if bwrap is missing)"

// sandboxCommands sets env's OS sandbox for approved commands when --sandbox or the global
// settings' "sandbox" asks for one; it fails (exit 2) when bubblewrap cannot build one here.
func sandboxCommands(env *delivery.Env, requested bool) error {
	sb, err := system.CommandSandboxes(env.Home, requested)
	if err != nil {
		return err
	}
	env.Sandbox = sb
	return nil
}
