// Package command runs command hooks: shell commands configured under "hooks" in settings.json,
// in the shape and with the contract Claude Code documents, so that existing hook scripts work
// unchanged. The README's "Hooks" section is the user's reference; this is the contract.
//
// Configuration ([Config]): event name → matcher groups → handlers. Every Claude Code event
// ([ClaudeEvents]) and handler field is accepted; [Config.Check] warns about events rein never
// fires, handler types other than "command" and PowerShell hooks (accepted, never run) and
// refuses unknown events and types, empty commands, bad timeouts, matchers and "if" rules that
// do not compile — or, leniently (Claude Code's own files), drops the entry with a warning.
// Matchers are names or lists of names, else RE2 expressions matched against the whole name.
//
// Events and kernel points ([Runner.Register] adds one hooks.Registry hook per command, in
// settings order):
//
//	UserPromptSubmit → before_agent_start   PreToolUse → before_tool
//	SessionStart     → session_start        PostToolUse, PostToolUseFailure → after_tool
//	SessionEnd       → session_end          Stop → stop       PreCompact → before_compact
//
// Notification is no kernel point: the composition root calls [Runner.Notify] when a
// permission prompt is about to wait for the user (notification_type permission_prompt); its
// hooks decide nothing. The other Claude Code events are accepted, never fired: one warning
// per configuration names those it holds.
//
// Running: sh -c (or the program with "args") in the project directory, the event's JSON on
// stdin (Claude Code's fields: session_id, transcript_path, cwd, permission_mode,
// hook_event_name and the event's own; rein's tools under Claude Code's names — MultiEdit for
// an edit of several replacements — with Claude Code's argument names and tool_response
// shapes, paths absolute), the environment plus CLAUDE_PROJECT_DIR and REIN_PROJECT_DIR (and
// CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA for a plugin's hooks, see [Config.PluginRoot] and
// [Config.PluginData]; CLAUDE_ENV_FILE for
// SessionStart hooks when [Runner.EnvFile] is set, read back with [ParseEnvFile] by the
// caller, who applies its assignments to later bash commands), in a process group of
// its own that is killed when the timeout passes or the run is cancelled. stdout and stderr
// are read up to 1 MiB each. Before each command [Runner.Sync] rewrites the [Transcript].
//
// Answers: exit status 2 blocks (stderr is the reason); exit status 0 with stdout that is one
// JSON object is an answer — the documented fields only; those rein does not act on, or that
// belong to another event, are ignored with a notice; stdout that is not valid JSON is plain
// text, as Claude Code reads it (a failure for a fail-closed hook), context for
// UserPromptSubmit and SessionStart. Any other exit status, a signal, a timeout or an invalid
// answer is a *[RunError]: the registry reports it and, per the hook's fail mode, ignores it
// (fail open, the default) or refuses what the point guards (fail closed). Async hooks, and
// commands whose first line is {"async": true}, run in the background; what they say when
// they end is appended to the next tool result or prompt.
//
// A PreToolUse rewrite (updatedInput) is mapped back to rein's arguments; one rein cannot honour
// blocks the call rather than letting it run unchanged. The kernel validates the rewrite against
// the tool's schema and puts it to the permission gate again.
//
// Nothing here records payloads: a [RunError]'s HookDetail names the failure without quoting
// the command's output, and hooks are named by their place in the settings, not their command.
package command
