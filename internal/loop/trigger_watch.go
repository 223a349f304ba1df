package loop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxWatched bounds a snapshot: watching more files than this is refused (watch narrower
// paths), so one poll stays cheap.
const maxWatched = 50000

// fileStamp is what a snapshot keeps of one entry: a change to any field is a change.
type fileStamp struct {
	size  int64
	mtime int64 // nanoseconds
	inode uint64
	mode  fs.FileMode
}

// watchSnap maps slash paths relative to the workspace to their stamps.
type watchSnap map[string]fileStamp

// watcher polls a watch trigger's paths inside the workspace (through os.Root: a symlink is
// recorded as itself, never followed out) and debounces: changes fire once, after a quiet
// spell of debounce with no further change.
type watcher struct {
	root     *os.Root
	paths    []string
	skip     []string // slash paths never looked into: rein's home inside the workspace
	debounce time.Duration

	last       watchSnap
	pending    map[string]bool
	lastChange time.Time
}

// newWatcher opens ws and takes the first snapshot (the baseline). home is $REIN_HOME: when it
// lies inside ws, nothing under it is watched.
func newWatcher(ws, home string, paths []string, debounce time.Duration) (*watcher, error) {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("%w: the workspace %s: %w", ErrTrigger, ws, err)
	}
	w := &watcher{root: root, paths: paths, debounce: debounce}
	if rel, err := filepath.Rel(ws, home); err == nil && home != "" && rel != ".." && !strings.HasPrefix(rel, "../") {
		w.skip = append(w.skip, filepath.ToSlash(rel))
	}
	if w.last, err = w.snapshot(); err != nil {
		root.Close()
		return nil, err
	}
	return w, nil
}

func (w *watcher) close() { w.root.Close() }

// rebase takes a new baseline and forgets pending changes (they were a round's own writes).
func (w *watcher) rebase() error {
	s, err := w.snapshot()
	if err != nil {
		return err
	}
	w.last, w.pending = s, nil
	return nil
}

// poll takes a snapshot at now and returns the changed paths when a burst is over: changes
// were seen and none in the last debounce.
func (w *watcher) poll(now time.Time) ([]string, error) {
	cur, err := w.snapshot()
	if err != nil {
		return nil, err
	}
	changed := diff(w.last, cur)
	w.last = cur
	if len(changed) > 0 {
		if w.pending == nil {
			w.pending = map[string]bool{}
		}
		for _, p := range changed {
			w.pending[p] = true
		}
		w.lastChange = now
		return nil, nil
	}
	if len(w.pending) == 0 || now.Sub(w.lastChange) < w.debounce {
		return nil, nil
	}
	out := make([]string, 0, len(w.pending))
	for p := range w.pending {
		out = append(out, p)
	}
	slices.Sort(out)
	w.pending = nil
	return out, nil
}

func diff(a, b watchSnap) []string {
	var out []string
	for p, s := range b {
		if o, ok := a[p]; !ok || o != s {
			out = append(out, p)
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// snapshot stamps every entry under the watched paths, leaving out .rein, .git and rein's home.
func (w *watcher) snapshot() (watchSnap, error) {
	s := watchSnap{}
	for _, p := range w.paths {
		if err := w.walk(s, p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (w *watcher) ignored(p string) bool {
	base := path.Base(p)
	if base == ".rein" || base == ".git" {
		return true
	}
	for _, sk := range w.skip {
		if p == sk || strings.HasPrefix(p, sk+"/") || sk == "." {
			return true
		}
	}
	return false
}

func (w *watcher) walk(s watchSnap, p string) error {
	if w.ignored(p) {
		return nil
	}
	fi, err := w.root.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: watch %s: %w", ErrTrigger, p, err)
	}
	if len(s) >= maxWatched {
		return fmt.Errorf("%w: watch %s: more than %d files under the watched paths; watch narrower paths", ErrTrigger, strings.Join(w.paths, " "), maxWatched)
	}
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), inode: inode(fi), mode: fi.Mode()}
	if fi.IsDir() {
		st.size, st.mtime = 0, 0 // a directory's own stamp changes with every entry: its entries say what changed
	}
	s[p] = st
	if !fi.IsDir() {
		return nil
	}
	f, err := w.root.Open(p)
	if err != nil {
		return fmt.Errorf("%w: watch %s: %w", ErrTrigger, p, err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("%w: watch %s: %w", ErrTrigger, p, err)
	}
	for _, n := range names {
		if err := w.walk(s, path.Join(p, n)); err != nil {
			return err
		}
	}
	return nil
}
