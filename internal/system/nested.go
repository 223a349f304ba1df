package system

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/reinhq/rein/internal/sandbox"
)

// MaxNestedWalk bounds the entries nestedProtected looks at.
const MaxNestedWalk = 200_000

// nestedProtected finds, below the top of the workspace, the entries a later run or a later
// git command on the host would load or execute — a nested repository's .git, and .rein,
// .claude, .mcp.json, .agents in subdirectories — so the sandbox protects them as it does the
// top-level ones. The walk does not follow links, does not enter a .git or node_modules
// directory (nothing there is run by git or rein), and fails past MaxNestedWalk entries,
// naming what to do, rather than start a sandbox that leaves one writable.
func nestedProtected(ws string) ([]string, error) {
	var out []string
	walked := 0
	errTooMany := errors.New("too many entries")
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == ws {
			return nil // unreadable here: unreadable in the sandbox too
		}
		if walked++; walked > MaxNestedWalk {
			return errTooMany
		}
		rel, _ := filepath.Rel(ws, p)
		name := d.Name()
		if slices.Contains(sandbox.DefaultProtect, name) && filepath.Dir(rel) != "." {
			if d.Type()&fs.ModeSymlink == 0 { // a link is refused by the sandbox itself below
				out = append(out, rel)
			}
		}
		if d.IsDir() && (name == ".git" || name == "node_modules" || slices.Contains(sandbox.DefaultProtect, name)) {
			return filepath.SkipDir
		}
		return nil
	})
	if errors.Is(err, errTooMany) {
		return nil, fmt.Errorf("%w: --sandbox: the working directory holds more than %d entries, too many to find every nested repository and rein or agent configuration to protect; run rein in a smaller directory", ErrConfig, MaxNestedWalk)
	}
	return out, err
}
