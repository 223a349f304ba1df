package system

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/reinhq/rein/internal/policy"
)

// Bounds of the walk that finds the paths a sandbox masks. Past either, the run stops
// (ErrConfig) rather than start a sandbox that might leave a denied file readable.
const (
	// MaxMaskWalk is the number of workspace entries (files, directories, links; .git
	// directories not entered) looked at for paths the read rules deny.
	MaxMaskWalk = 200_000
	// MaxMasks is the number of paths one sandbox masks.
	MaxMasks = 4096
)

// inode identifies a file across its hard links.
type inode struct{ dev, ino uint64 }

// readMasks lists the absolute paths a sandbox must mask so that no command reads what the
// read rules deny or ask for (nobody can be asked inside the sandbox), in the workspace dir
// and in each additional directory of extra (writable in the sandbox too; their paths judged
// by absolute path, as the file tools judge them): every file or directory they cover (a
// directory is masked whole), every symbolic link they cover or whose target they cover (the
// sandbox masks the target), every other hard link of a file they cover, and every
// hard-linked file with a name the walks did not find (a link to a file outside these
// trees, or in .git: its other names are unknown, and the file tools refuse it for the same
// reason). The walks do not follow links and skip .git directories; past [MaxMaskWalk]
// entries in all or [MaxMasks] paths it fails, naming what to do.
func readMasks(pol *policy.Policy, dir string, extra []string) ([]string, error) {
	denied := func(p string) bool {
		v := pol.DecidePath(policy.OpRead, p).Verdict
		return v == policy.Deny || v == policy.Ask
	}
	w := &maskWalk{denied: denied, deniedFiles: map[inode]bool{}, linked: map[string]inode{}, names: map[inode]uint64{}, links: map[inode]uint64{}}
	var err error
	for i, root := range append([]string{dir}, extra...) {
		// The workspace's paths are judged relative to it, an additional directory's absolute.
		if err = w.walk(root, i > 0); err != nil {
			break
		}
	}
	for p, id := range w.linked {
		if w.deniedFiles[id] || w.names[id] < w.links[id] {
			w.masks = append(w.masks, p)
		}
	}
	if errors.Is(err, errTooMany) || len(w.masks) > MaxMasks {
		return nil, fmt.Errorf("%w: --sandbox: the read rules deny paths, and the workspace %s (with its additional directories) is too large to look through for them (more than %d entries, or more than %d paths to mask), so the sandbox could not keep them unreadable; deny whole directories instead of many files, run in a smaller directory, or run without --sandbox",
			ErrConfig, dir, MaxMaskWalk, MaxMasks)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --sandbox: looking for the paths the read rules deny: %w", ErrConfig, err)
	}
	return w.masks, nil
}

// maskWalk is what readMasks gathers over the trees it walks.
type maskWalk struct {
	denied      func(string) bool
	masks       []string
	deniedFiles map[inode]bool
	linked      map[string]inode // hard-linked files not covered themselves
	names       map[inode]uint64 // names of each hard-linked file found by the walks
	links       map[inode]uint64 // its link count
	walked      int
}

// walk looks through the tree dir for what the read rules cover; abs judges its paths by
// absolute path rather than relative to dir.
func (w *maskWalk) walk(dir string, abs bool) error {
	var under string // the masked directory being walked (for the inodes of its files)
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable here: unreadable in the sandbox too
		}
		if p == dir {
			return nil
		}
		if w.walked++; w.walked > MaxMaskWalk {
			return errTooMany
		}
		rel := p
		if !abs {
			rel, _ = filepath.Rel(dir, p)
		}
		inMasked := under != "" && within(under, p)
		if !inMasked {
			under = ""
		}
		switch {
		case d.IsDir():
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			if !inMasked && w.denied(rel) {
				w.masks, under = append(w.masks, p), p
			}
		case d.Type()&fs.ModeSymlink != 0:
			if inMasked {
				return nil
			}
			if w.denied(rel) {
				w.masks = append(w.masks, p)
			} else if target, err := filepath.EvalSymlinks(p); err == nil && w.denied(target) {
				w.masks = append(w.masks, target)
			}
		case d.Type().IsRegular():
			if err := w.file(p, d, inMasked || w.denied(rel), inMasked); err != nil {
				return err
			}
		}
		if len(w.masks) > MaxMasks {
			return errTooMany
		}
		return nil
	})
}

// file records the regular file p: masked when covered (and not under a masked directory
// already), remembered by inode when it has other hard links.
func (w *maskWalk) file(p string, d fs.DirEntry, covered, inMasked bool) error {
	fi, err := d.Info()
	if err != nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no inode information", p)
	}
	id := inode{uint64(st.Dev), st.Ino}
	if covered {
		w.deniedFiles[id] = true
	}
	if st.Nlink > 1 {
		w.names[id]++
		w.links[id] = uint64(st.Nlink)
	}
	switch {
	case covered && !inMasked:
		w.masks = append(w.masks, p)
	case !covered && st.Nlink > 1:
		w.linked[p] = id
	}
	return nil
}

var errTooMany = errors.New("too many entries")

// within reports whether p is dir or lies below it.
func within(dir, p string) bool {
	return p == dir || len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == os.PathSeparator
}
