// Package sandbox confines commands with bubblewrap (the bwrap program, Debian package
// "bubblewrap"). A [Sandbox] turns a command (argv, working directory, environment) into a
// bwrap command line; the bash tool (internal/tool/shell) and approved commands
// (internal/command) run through it when rein runs with --sandbox.
//
// # What the sandbox guarantees
//
// A sandboxed command, and everything it starts,
//
//   - sees the system read-only: /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32, /etc and
//     /opt as on the host ([SystemPaths]; merged-/usr symbolic links are recreated), plus
//     [Config.ReadOnly]; the root itself is an empty read-only file system;
//   - can write only the workspace ([Config.Workspace]) and a private, empty /tmp that
//     disappears with it;
//   - can neither change, rename, remove, replace nor create [Config.Protect] (default
//     [DefaultProtect]: .git, .rein, .claude, .mcp.json, .agents — the entries through which
//     a command could make the host run code later), nor anything below them: each is bound
//     read-only onto itself, a mount point, so writes fail with EROFS and renames with EBUSY;
//     a missing one is held by a placeholder (see [Sandbox.Prepare]). Directories on the way
//     to a nested protected path stay writable but cannot be renamed away;
//   - cannot read a [Config.Mask] path (the files and directories the read deny rules cover,
//     resolved through their symbolic links): a file is covered by the null device (opening
//     it for reading fails or yields nothing), a directory by an empty read-only file
//     system, whatever name or computed path a command uses;
//   - has no network: a new network namespace with only a loopback interface (--unshare-net);
//   - cannot see $REIN_HOME (sessions, credentials, settings, trust decisions): nothing
//     outside the paths above is mounted, and a [Config.Hide] path lying inside the
//     workspace or a read-only path is covered by an empty read-only file system;
//   - runs in new user (where the kernel allows it), PID, IPC, UTS and cgroup namespaces and
//     a new session (no TIOCSTI into rein's terminal), with every capability dropped, even
//     when rein runs as root; /proc shows only its own processes and /dev only the basic
//     devices;
//   - dies with its parent (--die-with-parent): when bwrap or rein is killed, every process
//     in the sandbox is killed, including those that left the process group.
//
// The environment is the caller's, with TMPDIR=/tmp and XDG_CACHE_HOME=/tmp/.cache (caches
// in the home directory are not visible) — callers strip secrets from it first.
//
// # What it does not guarantee
//
// It is not a virtual machine: the kernel is shared, and a kernel bug can break out. The
// workspace is writable, so a command can change any file there that is not protected —
// including files rein or the user later run (a Makefile, a test, a git hook in a nested
// repository, which is not protected). Reading is confined only by what is mounted: the
// whole of /etc is readable. CPU, memory and disk use are not limited. Git inside the
// sandbox can read the repository but not write it: commits, checkouts, git add, git config
// fail (the index, objects and references are read-only too): commit on the host. A
// linked worktree whose git directory lies outside the workspace cannot be used by git at
// all. A protected path that is a symbolic link, or lies below one, is refused by [New]: a
// mount cannot keep a link from being replaced.
//
// While a command runs, a missing protected entry shows on the host as an empty directory
// with mode 0500 (the placeholder); it is removed when the last command holding it ends, and
// a placeholder left behind by a rein that was killed is removed by the next one.
//
// # Availability
//
// [New] fails with an error wrapping [ErrUnavailable], which names the package to install,
// when bwrap is missing; [Sandbox.Check] fails the same way when bwrap is installed but
// cannot build a sandbox here (user namespaces disabled, say). Nothing in rein falls back
// to running a command unsandboxed when a sandbox was asked for.
//
// Flags verified on Debian 12 (bubblewrap 0.8.0) as root in a container: --unshare-user-try,
// --unshare-ipc, --unshare-pid, --unshare-net, --unshare-uts, --unshare-cgroup-try,
// --new-session, --die-with-parent, --cap-drop ALL, --proc, --dev, --tmpfs, --remount-ro.
// Without --cap-drop ALL a root caller keeps its capabilities inside and could unmount the
// read-only binds.
package sandbox
