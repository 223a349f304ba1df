// Package pathrule matches workspace paths against path globs: the globs of the permission
// rules' read(…)/write(…) patterns and the protected paths no tool or command may write.
// It is the one matcher both internal/policy (rules and bash command lines) and the file
// tools (internal/tool/fstool) use, so they refuse the same paths.
//
// # Globs
//
// [Compile] cleans a doublestar glob ([github.com/bmatcuk/doublestar/v4]): "./" and a
// trailing "/" are dropped, "~/" is the home directory, a glob starting with "/" matches
// absolute paths, ".." is refused. [Glob.Match] matches the cleaned, slash-separated path
// that [Resolve] gives — workspace-relative for a relative glob, absolute for an absolute
// one — and also everything below a directory it matches ("docs" covers docs/a.md); it
// compares case-insensitively when asked (deny and protected globs, so .GIT is caught on
// case-insensitive file systems).
//
// # Protected paths
//
// [DefaultProtected] (.git and .rein, at any depth) and [StoreProtected] (rein's ledgers,
// their locks and evidence files, blob stores) are the default lists. A [ProtectedPaths]
// compiles a list against a workspace directory; [ProtectedPaths.Check] refuses a protected
// path with an *[refusal.Error] of code [CodeProtectedPath] whose message says why the path
// is protected and what to do. Matching is lexical: a symbolic link is not followed here
// (the file tools resolve links first and check both names).
//
// # Dependencies
//
// The package is small on purpose: it links no shell parser and no sandbox, so the file
// tools stay free of both (a test in internal/tool/fstool checks it).
package pathrule
