package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/tui"
)

// uiHost implements tui.Workspace: the files `@` completes.
var _ tui.Workspace = (*uiHost)(nil)

// maxWalkedFiles bounds the files listed outside git.
const maxWalkedFiles = 20000

var errEnough = errors.New("enough files")

// Files lists the workspace's files: in a git work tree the tracked ones and the untracked
// ones git does not ignore (git ls-files), elsewhere a walk of the directory (.git
// skipped, at most maxWalkedFiles).
func (h *uiHost) Files() ([]string, error) {
	return workspaceFiles(context.Background(), h.dir)
}

func workspaceFiles(ctx context.Context, dir string) ([]string, error) {
	git := gitx.Runner{Dir: dir}
	if git.IsRepo(ctx) {
		return git.LsFiles(ctx, "--cached", "--others", "--exclude-standard")
	}
	var out []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && d.Name() == ".git":
			return fs.SkipDir
		case d.Type().IsRegular():
			out = append(out, filepath.ToSlash(p))
			if len(out) >= maxWalkedFiles {
				return errEnough
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	return out, nil
}
