// Package command runs command hooks: shell commands configured under "hooks" in settings.json,
// in the shape and with the contract Claude Code documents, so that existing hook scripts work
// unchanged. The README's "Hooks" section is the user's reference; this is the contract.
//
// Configuration ([Config]): event name → matcher groups → hooks of type "command" with a
// command, a timeout in seconds (default [DefaultTimeout]) and, as a rein extension,
// failClosed. [Config.Check] refuses unknown events and types, empty commands, bad timeouts
// and matchers that do not compile. Matchers are RE2 expressions matched against the whole
// name ("" and "*" match all).
//
// Events and kernel points ([Runner.Register] adds one hooks.Registry hook per command, in
// settings order, global first):
//
//	UserPromptSubmit → before_agent_start   PreToolUse → before_tool   PostToolUse → after_tool
//	SessionStart     → session_start        Stop       → stop          PreCompact  → before_compact
//	SessionEnd       → session_end
//
// Running: sh -c in the project directory, the event's JSON on stdin (Claude Code's fields:
// session_id, transcript_path, cwd, permission_mode, hook_event_name and the event's own; rein's
// tools under Claude Code's names and argument names, paths absolute), the environment plus
// CLAUDE_PROJECT_DIR and REIN_PROJECT_DIR, in a process group of its own that is killed when
// the timeout passes or the run is cancelled. stdout and stderr are read up to 1 MiB each.
//
// Answers: exit status 2 blocks (stderr is the reason); exit status 0 with stdout starting with
// "{" is a JSON answer parsed strictly — the documented fields only, each only for the events it
// belongs to; other stdout is plain text (context for UserPromptSubmit and SessionStart). Any
// other exit status, a signal, a timeout or an invalid answer is a *[RunError]: the registry
// reports it and, per the hook's fail mode, ignores it (fail open, the default) or refuses what
// the point guards (fail closed).
//
// A PreToolUse rewrite (updatedInput) is mapped back to rein's arguments; one rein cannot honour
// blocks the call rather than letting it run unchanged. The kernel validates the rewrite against
// the tool's schema and puts it to the permission gate again.
//
// Nothing here records payloads: a [RunError]'s HookDetail names the failure without quoting
// the command's output, and hooks are named by their place in the settings, not their command.
package command
