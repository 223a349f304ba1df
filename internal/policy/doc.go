// Package policy decides whether a tool call may run: permission rules for tool calls and
// bash command lines (with the shell analysis behind them), and role tool surfaces. Its
// neighbours hold the rest of rein's guards: internal/pathrule the path globs and protected
// paths (shared with the file tools), internal/command approved commands, internal/secret
// secret scanning and redaction.
//
// # The command rules are NOT a sandbox
//
// Rules match the words of a command line before it runs. They stop a model from running a
// command the user denied by accident or by habit, and they let the user approve common
// commands without prompts. They cannot stop a determined program: a command the rules
// allow can still do anything its code does (a test suite, a Makefile, "python -c", "git"
// with an alias, an interpreter reading a file written a moment earlier). Isolation comes
// from the OS: rein's --sandbox (bubblewrap) for commands, os.Root confinement for the file
// tools. Deny rules are best effort against commands that run other commands; this package
// looks inside the common ones (listed below) and refuses lines it cannot see through.
//
// # Rule syntax
//
// Settings hold {"permissions": {"allow": [...], "ask": [...], "deny": [...]}} ([Rules]).
// A rule is
//
//   - a tool name: "edit", "bash", "mcp_search" — every call of that tool;
//   - an MCP tool rule: "mcp__server" or "mcp__server__*" (every tool of that server),
//     "mcp__server__tool", or a glob where "*" is any run of characters
//     ("mcp__github__get_*"); an allow glob must follow a literal "mcp__<server>__", while
//     deny and ask may use "mcp__*" (every MCP tool);
//   - bash(PATTERN): a pattern over the words of each simple command;
//   - read(GLOB), write(GLOB), edit(GLOB), grep(GLOB), find(GLOB), ls(GLOB): a doublestar glob
//     over the path. read(…) covers every reading tool (read, grep, find, ls) and the paths
//     a bash line reads; write(…) and edit(…) cover both writing tools (write, edit) and the
//     paths a bash line writes; grep(…), find(…), ls(…) cover only that tool.
//
// Tool names are case-insensitive. Deny wins over ask, ask over allow; a call no rule
// matches gets [NoMatch] and the caller's default.
//
// Path globs ([github.com/bmatcuk/doublestar/v4], matched by internal/pathrule) match the cleaned, workspace-relative,
// slash-separated path: "docs/**", "**/.env", "*.go" (top level only). "./" and a trailing
// "/" are dropped, "~/" is the home directory, and a glob starting with "/" matches absolute
// paths. A glob also matches everything below a directory it matches ("write(docs)" covers
// docs/a.md). Deny and ask globs match case-insensitively (".ENV" is caught on
// case-insensitive file systems); allow globs match exactly. [Policy.Decide] judges the path
// a call names (edit against the read rules as well as the write rules: its result shows the
// file's lines); directory tools (ls, find, grep) are checked against the directory they are
// given, and the composition root filters what they meet inside it, and every path a tool
// opens after resolving its links, with [Policy.DecidePath] (see internal/tool's Guard).
// [Policy.DeniesReads] says whether read rules deny or ask for paths, in which case a file
// with more than one hard link is refused too (its other names are unknown).
//
// A tool that is neither bash nor a file tool (contract tools, MCP tools) is judged by its
// whole-tool rules and by every top-level argument named like a path (path, filePath,
// paths, target_file, dir, uri…; a string or an array of strings) against the read and
// write deny and ask rules: the extension point that makes the rules hold for tools added
// later without a change to this package.
//
// [Config.ReadProtected] paths ($REIN_HOME) may not be read by any tool or command, whatever
// the rules say ([CodeProtectedPath]).
//
// Command patterns are words separated by spaces: "git push *", "go test ./...", "rm *".
// Each word is a glob over one word of the command: "*" matches any characters (including
// "/" and none), "?" one character, "\" escapes the next character (also a space); there are
// no character classes. A final "*" matches any number of further words, including none
// ("git push *" matches "git push" and "git push origin main" but not "git pushx"); "**" does
// so anywhere. "bash(*)" is the whole tool. The legacy suffix ":*" ("npm run:*") means " *".
// Patterns match words, not meaning: "rm -rf *" does not match "rm -fr x" or "rm -r -f x";
// write deny rules broadly ("rm *").
//
// Words are compared after the shell's quote removal: \rm, r""m, 'rm', $'\x72m' are all rm.
// The command name of a deny or ask pattern without "/" also matches any path with that base
// name (/bin/rm, ./rm); an allow pattern approves a command given by path only when it
// spells the path. A word whose value is only known when the line runs ($VAR, $(cmd), globs)
// may be anything for deny and ask rules — an unquoted one any number of words — and
// satisfies an allow pattern only where the pattern has "*" (one word, if it cannot split)
// or a final "*".
//
// # What a bash line is checked for
//
// [Policy.DecideCommand] parses the line with mvdan.cc/sh/v3/syntax and judges every simple
// command in it: pipelines, && || ; lists, subshells, { } groups, if/for/while/case,
// function bodies, command and process substitution (also inside words, expansions,
// arithmetic and unquoted here-documents), coproc and time. It looks inside:
//
//   - bash/sh/zsh/dash/ksh -c SCRIPT, and a shell (or . / source) fed a here-document or
//     here-string, also when it names standard input as its script (/dev/stdin, /dev/fd/0,
//     /proc/self/fd/0); any other descriptor (/dev/fd/N, /dev/tty) is refused;
//   - eval, trap and alias (their text is a script), flock -c, watch;
//   - su and runuser with options anywhere (getopt permutes): -c/--command, the words after
//     the user (given to the shell), runuser -u USER -- COMMAND;
//   - env (assignments, -i, -u, -C, -S/--split-string), sudo, doas, nice, nohup, timeout,
//     stdbuf, setsid, ionice, time, command, builtin, exec, chroot, busybox;
//   - xargs CMD (the input words are unknown), find -exec/-execdir/-ok/-okdir CMD … ; or +.
//
// The line is denied when
//
//   - it does not parse ([CodeUnparseable]), is longer than 256 KiB, nests more than 12
//     levels or holds more than 512 commands ([CodeUnanalysable]);
//   - a command name is not a fixed word ($CMD arg, $(echo rm), "${a[@]}", {rm,x}, r?),
//     a shell or eval gets a script computed at run time (bash -c "$(curl …)"), a shell
//     reads its script from a pipe (curl … | sh), a sourced or executed script path is
//     computed (source <(…)), or a wrapper has an option this package does not know
//     ([CodeUnanalysable]);
//   - it writes to a protected path ([CodeProtectedPath]) through a redirection (> >> >|
//     &> &>> >&FILE <>) or as an operand of a common file-changing command (tee, cp, mv,
//     ln, rm, touch, mkdir, chmod, sed -i, dd of=, curl -o, find -fprint…), resolving
//     relative paths against every directory the line cd's into; a redirection to a
//     computed path, or a relative write after a cd to a computed directory, is
//     [CodeUnanalysable];
//   - it reads a read-protected path ([CodeProtectedPath]);
//   - any command may match a deny rule, or a path it reads or writes may match a deny
//     read/write rule ([CodeDenied]). The paths a line reads are the arguments of every
//     command, the text after "=" of one (dd if=PATH, --file=PATH) and input redirections;
//     a word computed from variables is expanded with the values the line can tell:
//     $PWD, ${PWD} and $(pwd) are the workspace or a directory the line cd's into, $HOME the
//     home directory, and a variable the line assigns (f=.env; export f=…; for f in …)
//     takes every value it is given anywhere in the line; ${f:-WORD} adds WORD. A word
//     with any other computed part ($(cmd), a variable from the environment) is not
//     checked: bash outside the sandbox cannot be bounded by rules.
//
// Otherwise an ask match makes it [Ask]; it is [Allow] only when every command is matched
// by an allow rule — wrappers whose inner command is judged on its own (env, nice, timeout,
// bash -c, eval, xargs…) need no rule; sudo, doas, chroot and su do. A command that sets a
// variable changing what programs run (PATH, LD_PRELOAD, GIT_*, BASH_ENV… see [command.UnsafeEnv]),
// directly, through env or export, read or printf -v, or a line using hash -p, is never
// approved by a specific allow rule (the verdict is NoMatch); only a whole-tool "bash"
// allow approves it.
//
// Known limits: paths are checked lexically (a symlink into .git is not followed; os.Root
// confinement of the file tools is what holds), "cd" ignores CDPATH unless the line sets it,
// arithmetic evaluation of variable contents and programs that run code from files or
// arguments (python -c, make, git aliases, ssh host cmd) are not analysed.
//
// # Roles
//
// [SurfaceFor] gives each [Role] its tools: default every tool; workflow the read-only tools
// (read, grep, find, ls) and the run's contract tools; writer the file tools and
// [ToolRunCommand] (approved commands by id), never bash; review read, grep, find, ls and
// the contract tools. [Surface.Filter] removes every other tool from a tool set, so a role
// never sees a tool it cannot use; [Surface.Check] refuses a call outside the surface with
// [CodeReviewMutation] for a reviewer and [CodeToolNotInRole] otherwise.
//
// # Errors
//
// Every refusal is an *[refusal.Error] with a code ([CodeDenied], [CodeProtectedPath]…) and a
// message that says what to do; [Decision.Err] turns a Deny or Ask into one.
// [refusal.CodeOf] extracts the code.
package policy
