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
