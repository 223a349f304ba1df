// Package grep provides the grep tool: search file contents in the workspace for a regular
// expression or a literal string.
//
// Contract:
//
//   - Matching is line by line; a pattern that contains a line break is an error. Regular
//     expressions use the syntax shared by RE2 and Rust's regex crate (the ripgrep backend uses
//     the latter; constructs only one of them knows, such as Perl classes with different
//     Unicode reach, may behave differently).
//   - The search covers the files under path (the workspace when omitted) except the .git
//     directory, symbolic links met while walking, and files ignored by git (.gitignore,
//     .git/info/exclude, the global excludes file) when the searched directory lies in a git
//     work tree. Outside a work tree .gitignore files are not consulted (as ripgrep does).
//     Hidden files are searched. A file found by walking that contains a NUL byte in its first
//     64 KiB is binary and skipped; a NUL found later ends the search of that file. A path
//     that names a file directly is always searched, ignored or binary.
//   - path must stay inside the workspace, or inside one of its extra roots (the run's
//     additional directories, [tool.Workspace.Extra]), named by absolute path: "..", absolute
//     paths elsewhere and symbolic links that lead out of the root searched are errors. A
//     search without path covers the workspace only. Reported paths are relative to the
//     workspace (absolute for a search in an extra root), use "/" and follow the search
//     order: path components compared bytewise, lines in file order. In an extra root a glob
//     with "/" matches the path relative to that root, and the Guard judges each file by its
//     absolute path ([tool.Workspace.OutsideView]).
//   - With a [tool.Workspace.Guard] set, a named file or directory the Guard refuses makes
//     the call fail with its refusal, and a file under a searched directory that it refuses
//     (by its path, or by its hard link count) is left out: the native backend never opens
//     it ([Query.Skip]), ripgrep's matches in it are dropped before the tool counts them or
//     reads a line, so its text never reaches the output — glob, context lines included.
//   - glob selects files after the ignore rules (it never brings back an ignored file). A glob
//     without "/" matches file names ("*.go", "*.{ts,tsx}"); a glob with "/" matches the path
//     relative to the workspace ("src/**/*.ts", "/main.go"); a leading "!" excludes the files
//     it matches and everything under directories it matches.
//   - Output lines are `path:LINE: text` for matches and `path-LINE- text` for context lines;
//     the context of neighbouring matches is merged, never repeated. Lines longer than 500
//     characters are cut and marked "... [truncated]"; carriage returns are dropped. At most
//     limit (default 100) matching lines are reported and the whole text is cut to
//     [tool.MaxBytes]; notices say what was cut. No match gives "No matches found".
//   - Two backends give byte-identical results for the same tree: [NewRipgrep] runs the rg
//     binary (killed once enough matches are read) and [NewNative] is pure Go (listing files
//     with `git ls-files` inside a work tree). Both only find matching lines; the tool reads
//     the files itself to print them, so text, context and truncation never depend on the
//     backend.
//   - Replay is safe: the tool only reads.
package grep
