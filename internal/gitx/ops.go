package gitx

import (
	"bytes"
	"context"
	"strings"
)

// Output runs git with args and returns its stdout with surrounding white space trimmed.
func (r Runner) Output(ctx context.Context, args ...string) (string, error) {
	out, err := r.Run(ctx, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// LsFiles runs `git ls-files -z args…` and returns the paths it prints, in git's order, as
// git prints them: slash-separated and relative to Dir, unquoted.
func (r Runner) LsFiles(ctx context.Context, args ...string) ([]string, error) {
	out, err := r.Run(ctx, append([]string{"ls-files", "-z"}, args...)...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for p := range bytes.SplitSeq(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	return paths, nil
}

// IsRepo reports whether Dir is inside a git repository (a work tree or a bare repository).
// Any failure — git missing, not a repository, an unreadable directory — reads as false.
func (r Runner) IsRepo(ctx context.Context) bool {
	_, err := r.Run(ctx, "rev-parse", "--git-dir")
	return err == nil
}

// TopLevel returns the absolute path of the top of the work tree holding Dir.
func (r Runner) TopLevel(ctx context.Context) (string, error) {
	return r.Output(ctx, "rev-parse", "--show-toplevel")
}

// Head returns the commit id HEAD names; it fails when the repository has no commit.
func (r Runner) Head(ctx context.Context) (string, error) {
	return r.Output(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
}

// ConfigGet returns the value of the configuration key as git resolves it for Dir (global and
// repository files; never the system file). ok is false when the key is not set.
func (r Runner) ConfigGet(ctx context.Context, key string) (value string, ok bool, err error) {
	out, err := r.Run(ctx, "config", "--get", "--", key)
	if exitedWith(err, 1) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSuffix(string(out), "\n"), true, nil
}

// ResolveCommit returns the full commit id rev names; ok is false when rev names no commit
// (an unknown branch, a tree, a malformed name). rev is passed after --end-of-options, so a
// value beginning with "-" is never read as an option.
func (r Runner) ResolveCommit(ctx context.Context, rev string) (id string, ok bool, err error) {
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if exitedWith(err, 1) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// IsAncestor reports whether commit a is an ancestor of commit b (a commit is its own
// ancestor).
func (r Runner) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.Run(ctx, "merge-base", "--is-ancestor", "--end-of-options", a, b)
	if exitedWith(err, 1) {
		return false, nil
	}
	return err == nil, err
}

// SplitNUL splits NUL-terminated output (git's -z formats) into its fields, dropping the
// empty field after the last NUL.
func SplitNUL(out []byte) []string {
	var fields []string
	for f := range bytes.SplitSeq(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		fields = append(fields, string(f))
	}
	if len(out) == 0 {
		return nil
	}
	return fields
}
