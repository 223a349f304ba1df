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
// read rules deny or ask for (nobody can be asked inside the sandbox): every file or
// directory in the workspace they cover (a directory is masked whole), every symbolic link
// they cover or whose target they cover (the sandbox masks the target), every other hard
// link of a file they cover, and every hard-linked file with a name the walk did not find
// (a link to a file outside the workspace, or in .git: its other names are unknown, and the
// file tools refuse it for the same reason). The walk does not follow links and skips .git
// directories; past [MaxMaskWalk] entries or [MaxMasks] paths it fails, naming what to do.
func readMasks(pol *policy.Policy, dir string) ([]string, error) {
	denied := func(p string) bool {
		v := pol.DecidePath(policy.OpRead, p).Verdict
		return v == policy.Deny || v == policy.Ask
	}
	var masks []string
	deniedFiles := map[inode]bool{}
	linked := map[string]inode{} // hard-linked files not covered themselves
	names := map[inode]uint64{}  // names of each hard-linked file found by the walk
	links := map[inode]uint64{}  // its link count
	walked := 0
	var under string // the masked directory being walked (for the inodes of its files)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable here: unreadable in the sandbox too
		}
		if p == dir {
			return nil
		}
		if walked++; walked > MaxMaskWalk {
			return errTooMany
		}
		rel, _ := filepath.Rel(dir, p)
		inMasked := under != "" && within(under, p)
		if !inMasked {
			under = ""
		}
		switch {
		case d.IsDir():
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			if !inMasked && denied(rel) {
				masks, under = append(masks, p), p
			}
		case d.Type()&fs.ModeSymlink != 0:
			if inMasked {
				return nil
			}
			if denied(rel) {
				masks = append(masks, p)
			} else if target, err := filepath.EvalSymlinks(p); err == nil && denied(target) {
				masks = append(masks, target)
			}
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok {
				return fmt.Errorf("%s: no inode information", p)
			}
			id := inode{uint64(st.Dev), st.Ino}
			covered := inMasked || denied(rel)
			if covered {
				deniedFiles[id] = true
			}
			if st.Nlink > 1 {
				names[id]++
				links[id] = uint64(st.Nlink)
			}
			switch {
			case covered && !inMasked:
				masks = append(masks, p)
			case !covered && st.Nlink > 1:
				linked[p] = id
			}
		}
		if len(masks) > MaxMasks {
			return errTooMany
		}
		return nil
	})
	for p, id := range linked {
		if deniedFiles[id] || names[id] < links[id] {
			masks = append(masks, p)
		}
	}
	if errors.Is(err, errTooMany) || len(masks) > MaxMasks {
		return nil, fmt.Errorf("%w: --sandbox: the read rules deny paths, and the workspace %s is too large to look through for them (more than %d entries, or more than %d paths to mask), so the sandbox could not keep them unreadable; deny whole directories instead of many files, run in a smaller directory, or run without --sandbox",
			ErrConfig, dir, MaxMaskWalk, MaxMasks)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --sandbox: looking for the paths the read rules deny: %w", ErrConfig, err)
	}
	return masks, nil
}

var errTooMany = errors.New("too many entries")

// within reports whether p is dir or lies below it.
func within(dir, p string) bool {
	return p == dir || len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == os.PathSeparator
}
