// Package command runs approved commands: commands declared in advance by id, with a fixed
// argv, run without a shell. A writer agent asks for a command by id (the run_command tool
// of internal/policy's writer surface); it cannot change the program, the arguments or the
// environment.
//
// # Contract
//
// [Run] runs a [Command] — id, argv, working directory, an allowlist of environment names,
// a timeout — through the process runner (internal/proc):
//
//   - no shell: argv[0] without "/" is looked up in [FixedPath] only, never in rein's PATH;
//   - the environment is PATH=[FixedPath], the allowlisted variables that are set (never
//     one of [UnsafeEnv]: [Command.Validate] refuses to allowlist them), [FixedEnv], and
//     the process tag the process runner adds (internal/proc's EnvTag, naming no secret);
//   - stdin is /dev/null; stdout and stderr are merged in arrival order and the last
//     [Command.MaxOutput] bytes are kept, behind a truncation notice when earlier output was
//     dropped (never starting inside a UTF-8 sequence); [Result.TotalBytes] counts it all;
//   - the command leads its own process group, and the timeout, a cancelled context, or the
//     command's own exit kill the whole group, and every process it started that left the
//     group (setsid, daemons: proc's Contain); on Linux it also dies with rein (see
//     internal/proc for what that covers);
//   - with [Command.Sandbox] set it runs inside that bubblewrap sandbox (no network, only
//     the workspace writable, $REIN_HOME invisible); a sandbox that cannot start is
//     [CodeCommandFailed], never an unsandboxed run.
//
// A non-zero exit, a timeout and a cancellation are a [Result], not an error; an error is
// an *[refusal.Error]: [CodeInvalidCommand] for a declaration that cannot be run,
// [CodeCommandFailed] for a command that could not start. A [Registry] holds validated
// commands by id; an unknown id is [CodeUnknownCommand].
package command
