// Package shell provides the bash tool: run one shell command in the workspace directory and
// return its output.
//
// Contract:
//
//   - The command runs as `<shell> -c <command>` with the workspace directory as working
//     directory and stdin connected to /dev/null. The shell is [Options.Shell] when set, else
//     /bin/bash, else bash on PATH, else sh.
//   - The shell runs through rein's process runner (internal/proc) and leads its own process
//     group. A timeout or the cancellation of the Run context sends SIGKILL to the whole
//     group. When the shell ends — on its own, by timeout or abort — every process the
//     command started is ended with it: background jobs, nohup, double forks and processes
//     that left the group (setsid, daemons) included (proc's Contain; on Linux, by the tag
//     each process inherits, elsewhere the group only). The result then ends with a line
//     "[Ended N process(es) the command left running: name (pid P), …]", and the tool
//     description tells the model that background processes end with the command.
//     [Options.KeepBackground] is the opt-out for deliberate daemons: what the command
//     leaves running keeps running (proc's LeaveRunning), and once the shell has exited
//     Run waits at most [Options.WaitDelay] for a survivor holding the output pipe. On Linux
//     the shell is killed when rein dies, even by SIGKILL, and with [Options.Journal] what
//     it started is ended by the next rein (see internal/proc).
//   - stdout and stderr share one pipe, so their output is kept in arrival order.
//   - There is no default timeout unless [Options.DefaultTimeout] is set; a per-call timeout is
//     a number of seconds, > 0 and ≤ [MaxTimeoutSeconds].
//   - Output keeps a rolling tail. When it exceeds [tool.MaxLines] lines or [tool.MaxBytes]
//     bytes, the full output is written to a temporary file (rein-bash-*.log in
//     [Options.TempDir]) that the caller owns and the tool never deletes, and the result holds
//     the tail with a notice naming the file.
//   - A non-zero exit, a timeout and an abort are error results (IsError) that still carry the
//     output, followed by "Command exited with code N", "Command timed out after N seconds" or
//     "Command aborted". Only a failure to start the shell is a Go error.
//   - Partial output is reported through [tool.Call.Update] at most every 100 ms, each update
//     holding the accumulated (tail-truncated) output so far; no update is sent after Run
//     returns, and updates never overlap.
//   - The environment is inherited, minus variables whose names look like secrets
//     ([DefaultSecretEnv], configurable through [Options.StripEnv]).
//   - With [Options.Sandbox] set, the shell runs inside that bubblewrap sandbox (see
//     internal/sandbox): no network, only the workspace and a private /tmp writable,
//     $REIN_HOME and the home directory invisible, every process in the sandbox killed when
//     the command ends, times out or is aborted (background processes do not outlive it,
//     KeepBackground or not).
//     The tool description tells the model so. A sandbox that cannot start is a Go error
//     and the command does not run; it never runs unsandboxed instead. Exit codes pass
//     through; a command killed by a signal inside the sandbox shows as exit 128+N.
//   - Replay is never: a command may have side effects.
package shell
