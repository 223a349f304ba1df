// Package gitx is the one way rein runs git. Every git process rein starts — the file tools'
// listings, the grep backend, delivery-run preflight and snapshots, the demo, and the ticket
// worktrees (internal/worktree) — goes through [Runner], and an architecture test fails when
// a file outside this package starts git itself.
//
// # What a repository cannot make git do
//
// rein runs git inside projects it does not trust: a checkout whose .git/config, .gitattributes
// or hooks directory were written by someone else (or by the agent). A repository's own
// configuration must never make rein execute a command. Every invocation therefore is
//
//	git --no-pager -c core.fsmonitor=false -c core.hooksPath=/dev/null -c diff.external=
//	    -c core.pager=cat -c protocol.ext.allow=never -c core.quotePath=false -c color.ui=false
//	    -c credential.helper= -c core.askPass= [driver overrides] ARGS…
//
// Command-line configuration outranks every configuration file, so these hold whatever the
// system, global or repository configuration says:
//   - core.fsmonitor: a command git would run on status, diff, ls-files and anything that
//     refreshes the index.
//   - core.hooksPath=/dev/null: no hook (pre-commit, post-checkout, reference-transaction…) runs.
//   - diff.external, core.pager (and --no-pager, which also covers pager.<cmd>): the commands
//     git would start to show a diff or page output. The diff-family subcommands (diff, log,
//     show, diff-files, diff-index, diff-tree, whatchanged) also get --no-ext-diff and
//     --no-textconv right after the subcommand, so their output is git's own diff of the
//     bytes, whatever diff.external or an attribute-selected driver says.
//   - protocol.ext.allow=never: no ext:: transport (a remote URL that is a command line).
//   - credential.helper=, core.askPass=: no helper or prompt program runs if an operation ever
//     needs credentials; GIT_TERMINAL_PROMPT=0 makes git fail instead of asking.
//   - core.quotePath=false, color.ui=false: output is raw paths without escape codes, so callers
//     can parse it.
//
// Some commands are named in configuration under names no fixed list can know: the drivers a
// (tracked, attacker-writable) .gitattributes selects — filter.<name>.clean/.smudge/.process,
// diff.<name>.textconv/.command, merge.<name>.driver — and the signing programs gpg.program,
// gpg.<format>.program and gpg.ssh.defaultKeyCommand. Before any subcommand that may read or
// write file contents (everything except a short list of metadata-only commands: ls-files,
// rev-parse, check-ignore, check-ref-format, config, init, symbolic-ref, var, version), the
// runner lists those keys with their scope and overrides with an empty value each one defined
// outside the system and global files — in the repository's .git/config, its worktree
// configuration or a file they include. The user's own drivers (git-lfs's filter in
// ~/.gitconfig) keep working. An empty filter is no filter; an empty merge or signing program
// makes git fail rather than run something (a commit in a repository that asks for signing
// fails unless the caller passes -c commit.gpgSign=false). A key whose name git's -c syntax cannot
// express (it contains '=') makes the call fail with an error.
//
// Aliases need no neutralising: git never lets an alias shadow a built-in command, and rein
// runs only built-in commands. uploadpack.packObjectsHook is read by git only from protected
// (system, global, command-line) configuration, never from a repository, and rein runs no
// upload-pack. Keys that only network operations read (core.sshCommand, remote.*.uploadpack,
// url-scoped credential helpers) are not overridden: rein does not fetch or push; a caller that
// starts to must add them here first.
//
// # Environment
//
// The environment is built from scratch, not inherited: no GIT_* variable of rein's own
// environment reaches git (GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF,
// GIT_CONFIG_GLOBAL…), so nothing can point git at another repository or inject configuration.
// The child gets HOME, PATH, XDG_CONFIG_HOME, TMPDIR, USER, LOGNAME and EMAIL from rein's
// environment (so the user's global configuration and identity still read), and
// GIT_CONFIG_NOSYSTEM=1, GIT_TERMINAL_PROMPT=0, GIT_OPTIONAL_LOCKS=0 (status does not take the
// index lock), GIT_PAGER=cat, PAGER=cat, GIT_EDITOR=: and GIT_SEQUENCE_EDITOR=: (no editor ever
// starts) and LC_ALL=C (messages are parsed, see [ErrNotRepo]). A user who relies on
// GIT_CONFIG_GLOBAL or the system configuration for rein's git calls loses it by design.
//
// # Processes and errors
//
// Stdin is /dev/null. git runs as the leader of its own process group, and cancelling the
// context kills the whole group (hooks and helpers git started included, were any to run).
// A failure is an [*Error] holding the arguments, the exit code and the first [StderrCap]
// bytes of stderr; it wraps its cause, and errors.Is reports [ErrNotRepo] when the directory
// is not in a git repository, [ErrNoGit] when no git is on PATH, and the context's error when
// the call was cancelled.
//
// A Runner holds no state besides its directory; it is safe for concurrent use.
package gitx
