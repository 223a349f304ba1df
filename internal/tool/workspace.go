package tool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrOutsideWorkspace is returned for a path that would leave the workspace.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// Workspace is the directory tree the file tools may touch. Every access goes through Root,
// so symlinks that point outside are refused by the kernel as well as by Rel's checks.
type Workspace struct {
	// Dir is the absolute, symlink-resolved workspace directory.
	Dir  string
	Root *os.Root
	// Protected lists path globs that the writing tools (write, edit) refuse, matched
	// against the path as given and with its symbolic links resolved: workspace-relative
	// doublestar globs, or absolute ones, case-insensitive, a glob covering everything below
	// what it matches (the syntax of the permission rules' protected paths). Nil means the
	// file tools' default (fstool.DefaultProtected: .git internals, .rein policy files,
	// session ledgers and blob stores); an empty non-nil slice protects nothing. Set it
	// before the tools run; it must not change while they do.
	Protected []string
	// Guard, when set, judges every file the file tools and grep are about to read, list or
	// write, by its real path (see [Guard]). Set it before the tools run; it must not change
	// while they do. Nil judges nothing beyond confinement and Protected.
	Guard Guard
	// ReadOnly are directories outside Dir that the read tool may read, never write, list or
	// search (the skill directories of the run): each is reached only through its own
	// [os.Root], so a symbolic link inside one cannot lead out of it. Add them with
	// [Workspace.AddReadOnly] before the tools run.
	ReadOnly []ReadRoot
	// Extra are further directories outside Dir that the file tools (read, write, edit, ls,
	// find) may read and write, as they do Dir: the additional directories of the run's
	// settings. Each is reached only through its own [os.Root], confined as Dir is; Guard
	// judges their files by absolute path. Add them with [Workspace.AddExtra] before the
	// tools run.
	Extra []ReadRoot
}

// ReadRoot is one read-only directory of a workspace.
type ReadRoot struct {
	// Dir is the absolute, symlink-resolved directory.
	Dir  string
	Root *os.Root
}

// AddReadOnly opens dir (absolute) as a read-only root. A directory inside Dir or an extra
// root, or already added, needs none and is skipped.
func (w *Workspace) AddReadOnly(dir string) error {
	return w.addRoot(&w.ReadOnly, dir, "read-only")
}

// AddExtra opens dir (absolute, an existing directory) as an extra root the file tools may
// read and write. A directory inside Dir, or inside one already added, is skipped.
func (w *Workspace) AddExtra(dir string) error {
	return w.addRoot(&w.Extra, dir, "additional")
}

func (w *Workspace) addRoot(list *[]ReadRoot, dir, what string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s directory %q is not absolute", what, dir)
	}
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if inside(dir, w.Dir) {
		return nil
	}
	for _, r := range append(slices.Clone(w.Extra), *list...) {
		if inside(dir, r.Dir) {
			return nil
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s directory %s: %w", what, dir, err)
	}
	*list = append(*list, ReadRoot{Dir: dir, Root: root})
	return nil
}

// ReadRootFor returns the read-only root holding the absolute path p and p relative to it.
func (w *Workspace) ReadRootFor(p string) (*ReadRoot, string, bool) {
	return rootFor(w.ReadOnly, p)
}

// ExtraRootFor returns the extra root holding the absolute path p and p relative to it.
func (w *Workspace) ExtraRootFor(p string) (*ReadRoot, string, bool) {
	return rootFor(w.Extra, p)
}

func rootFor(roots []ReadRoot, p string) (*ReadRoot, string, bool) {
	if !filepath.IsAbs(p) {
		return nil, "", false
	}
	p = filepath.Clean(p)
	for i := range roots {
		r := &roots[i]
		if inside(p, r.Dir) {
			rel, err := filepath.Rel(r.Dir, p)
			if err == nil {
				return r, rel, true
			}
		}
	}
	return nil, "", false
}

// inside reports whether p is dir or lies below it (both clean and absolute).
func inside(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// Guard judges the paths a tool reaches, beyond confinement: the composition root sets it
// from the permission rules, so a rule holds for the path actually opened (its symbolic
// links resolved) and for every file a directory tool (grep, ls, find) meets, not only for
// the path a call names. Paths are workspace-relative, clean, with "/" separators and their
// symbolic links resolved. A refusal's message is shown to the model when the call named
// the path; a file refused inside a directory search is left out silently.
//
// It is the extension point for every tool that takes paths: a new tool that reads or
// writes files (an MCP tool given a "path" argument, say) asks the Guard before it opens
// them, the way the built-in tools do.
type Guard interface {
	// Read judges reading (or listing) rel. named is true when rel is the path the call
	// itself named, which the permission gate has judged already (asking the user when a
	// rule says so); links is the file's hard link count (0 for a directory or when the
	// tool only lists the name).
	Read(rel string, named bool, links uint64) error
	// Write judges writing rel; named as for Read.
	Write(rel string, named bool) error
}

// OpenWorkspace opens dir as a workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return &Workspace{Dir: abs, Root: root}, nil
}

// Close releases the root and the read-only roots.
func (w *Workspace) Close() error {
	err := w.Root.Close()
	for _, r := range append(w.ReadOnly, w.Extra...) {
		err = errors.Join(err, r.Root.Close())
	}
	w.ReadOnly, w.Extra = nil, nil
	return err
}

// Rel turns a path from a model into a clean path relative to the workspace ("." for the
// workspace itself). A leading "@" is dropped; an absolute path must lie inside Dir; a path
// that climbs out with ".." is refused with [ErrOutsideWorkspace].
func (w *Workspace) Rel(p string) (string, error) {
	orig := p
	p = strings.TrimPrefix(strings.TrimSpace(p), "@")
	if p == "" {
		return ".", nil
	}
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(w.Dir, filepath.Clean(p))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%w: %q is not under %s; use a path relative to the workspace", ErrOutsideWorkspace, orig, w.Dir)
		}
		return r, nil
	}
	c := filepath.Clean(p)
	if c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %q climbs above the workspace root; use a path inside it", ErrOutsideWorkspace, orig)
	}
	return c, nil
}
