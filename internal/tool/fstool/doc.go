// Package fstool provides the built-in file tools: read, write, edit, ls and find. Each is
// built on a [tool.Workspace] (Read(ws), Write(ws), Edit(ws), Ls(ws), Find(ws); All(ws) for
// the five) and reaches files only through its [os.Root], so no path leaves the workspace:
// "../x" and absolute paths outside it are refused by [tool.Workspace.Rel], and a symbolic link
// (to a file or a directory) that leads outside is refused by the root. Those refusals wrap
// [tool.ErrOutsideWorkspace]. Absolute paths inside the workspace are accepted; a leading "@"
// is dropped, special spaces become plain spaces and "~" is expanded (then checked like any
// absolute path).
//
// Read-only roots: read (only read) also reads files in the workspace's read-only
// directories ([tool.Workspace.ReadOnly], the skill directories outside the workspace), named
// by an absolute path (or "~/..."). Each is reached only through its own [os.Root], with the
// same link resolution, regular-file check and Guard (judging the absolute path) as the
// workspace, so a symbolic link inside a skill directory that leads out of it is refused.
// write, edit, ls, find and grep never reach them.
//
// # Confinement of writes
//
// Beyond the root, write and edit refuse
//
//   - protected paths ([tool.Workspace.Protected], default [DefaultProtected]: .git
//     internals — a .git directory and everything in it, or a worktree's .git file, in any
//     directory, case-insensitively —, .rein policy files — settings.json, SYSTEM.md,
//     APPEND_SYSTEM.md, skills/… —, and session ledgers and blob stores lying inside the
//     workspace — ledger.jsonl, ledger.lock, blobs/sha256/…). The path is checked as given
//     and with every symbolic link in it resolved, so a link inside the workspace that
//     points into .git does not open it. The refusal is a *[refusal.Error] with
//     [pathrule.CodeProtectedPath] whose message says why the path is protected;
//   - files with more than one hard link ([pathrule.CodeHardLinked]): a hard link to a file
//     outside the workspace is invisible to the root, and writing through it would change
//     that file. The link count is read from the opened descriptor, which is opened without
//     following a final symbolic link and without blocking on a FIFO, so the file checked is
//     the file written.
//
// # The Guard
//
// With [tool.Workspace.Guard] set (the permission rules, set by the composition root), every
// path is judged by its real location as well as by its name: read opens the path with its
// symbolic links resolved, without following a final link, and the Guard judges that path
// with the hard link count of the open descriptor; write and edit judge the resolved target
// they open (so a link pl -> docs/private does not carry a write past a rule on
// docs/private), and edit, whose result shows the file's lines, is judged as a read too; ls
// and find leave out every entry the Guard refuses to read, by its name or by what a
// symbolic link leads to (a denied file's name is not listed), and refuse to list a
// directory it refuses. A named path the Guard refuses fails the call with its message.
//
// No tool of this package creates symbolic or hard links (os.Root would let a symlink
// pointing outside be created; nothing here calls Symlink or Link). A link that already
// exists and points outside the workspace — absolute, climbing out with "..", dangling or
// not — is never followed by a write: the write fails with [tool.ErrOutsideWorkspace] and
// nothing is created outside. Reads of protected paths are allowed.
//
// Known limit: the checks and the write are separate steps, so a process running at the
// same time (a bash command in the background) that swaps a directory for a symbolic link
// between them could still redirect a write inside the workspace; the root keeps it inside.
// Run untrusted commands under --sandbox.
//
// Arguments reach Run already validated against the tool's schema (see [tool.Validate]);
// edit also implements [tool.Preparer] to accept two older argument shapes.
//
// Output limits are [tool.MaxLines] lines and [tool.MaxBytes] bytes. read keeps the head of a
// file without cutting a line; ls and find cut their lists at a count limit and at the byte
// limit. Every cut is announced at the end of the text with a notice that tells the model how
// to get the rest, and described in the result's Details (ReadDetails, LsDetails, FindDetails).
//
// Concurrency: the tools are safe for concurrent use and none is Sequential. write and edit
// hold a per-path lock (keyed by the absolute path, shared by all tools of this package in the
// process) while they read-modify-write, so mutations of one file are serialized while
// different files are changed in parallel; a read running during a write may see either
// content. Replay: read, ls and find are ReplaySafe; write and edit are ReplayNever.
//
// Errors returned by Run are messages for the model: they say what went wrong and what to do
// instead (the edit messages follow the reference wording, e.g. "Could not find the exact text
// in <path>...", "Found 2 occurrences of the text in <path>...").
package fstool

import "github.com/reinhq/rein/internal/tool"

// All returns the five file tools in the order read, write, edit, ls, find.
func All(ws *tool.Workspace) []tool.Tool {
	return []tool.Tool{Read(ws), Write(ws), Edit(ws), Ls(ws), Find(ws)}
}
