// Package ledgertest provides filesystems for testing code that writes ledgers: MemFS, an
// in-memory filesystem that can simulate a power loss (unsynced writes dropped, kept, torn or
// garbled, unsynced directory entries lost), and FaultFS, a decorator that fails or kills the
// process at a chosen operation. Both implement ledger.FS.
package ledgertest

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/reinhq/rein/internal/ledger"
)

// MemFS is an in-memory filesystem with an explicit model of durability, after SQLite's crash
// VFS: file content is durable only up to the last Sync of that file, and a directory entry
// (create, rename, remove, mkdir) only after SyncDir of its directory. Crash computes the state
// a power loss would leave. Paths are cleaned; "/" exists. Safe for concurrent use.
type MemFS struct {
	mu      sync.Mutex
	names   map[string]*inode // current directory entries (files)
	durable map[string]*inode // entries that survive a crash
	dirs    map[string]bool   // current directories
	durDirs map[string]bool   // directories that survive a crash
	locks   map[string]bool
}

type inode struct {
	durable []byte // content as of the last Sync
	data    []byte // current content
	ops     []op   // operations since the last Sync, in order
}

// op is an unsynced write (data at off) or truncation (to size).
type op struct {
	trunc bool
	off   int64
	data  []byte
	size  int64
}

// NewMemFS returns an empty filesystem holding only "/".
func NewMemFS() *MemFS {
	return &MemFS{
		names: map[string]*inode{}, durable: map[string]*inode{},
		dirs: map[string]bool{"/": true}, durDirs: map[string]bool{"/": true},
		locks: map[string]bool{},
	}
}

var _ ledger.FS = (*MemFS)(nil)

func clean(name string) string { return filepath.Clean("/" + name) }

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// OpenFile implements ledger.FS. Supported flags: O_RDONLY, O_WRONLY, O_RDWR, O_APPEND,
// O_CREATE, O_EXCL, O_TRUNC.
func (m *MemFS) OpenFile(name string, flag int, perm fs.FileMode) (ledger.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if !m.dirs[filepath.Dir(name)] {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	if m.dirs[name] {
		return nil, pathErr("open", name, fmt.Errorf("is a directory"))
	}
	ino, ok := m.names[name]
	switch {
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, fs.ErrExist)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, fs.ErrNotExist)
	case !ok:
		ino = &inode{}
		m.names[name] = ino
	}
	h := &handle{fs: m, ino: ino, name: name, flag: flag}
	if flag&os.O_TRUNC != 0 && h.writable() {
		ino.apply(op{trunc: true, size: 0})
	}
	return h, nil
}

// Mkdir implements ledger.FS.
func (m *MemFS) Mkdir(name string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if m.dirs[name] || m.names[name] != nil {
		return pathErr("mkdir", name, fs.ErrExist)
	}
	if !m.dirs[filepath.Dir(name)] {
		return pathErr("mkdir", name, fs.ErrNotExist)
	}
	m.dirs[name] = true
	return nil
}

// Rename implements ledger.FS for files.
func (m *MemFS) Rename(oldpath, newpath string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldpath, newpath = clean(oldpath), clean(newpath)
	ino, ok := m.names[oldpath]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrNotExist}
	}
	if !m.dirs[filepath.Dir(newpath)] || m.dirs[newpath] {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrNotExist}
	}
	delete(m.names, oldpath)
	m.names[newpath] = ino
	return nil
}

// Remove implements ledger.FS for files and empty directories.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if _, ok := m.names[name]; ok {
		delete(m.names, name)
		return nil
	}
	if m.dirs[name] && name != "/" {
		for n := range m.names {
			if filepath.Dir(n) == name {
				return pathErr("remove", name, fmt.Errorf("directory not empty"))
			}
		}
		delete(m.dirs, name)
		return nil
	}
	return pathErr("remove", name, fs.ErrNotExist)
}

// SyncDir implements ledger.FS: the entries of dir become durable.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	if !m.dirs[dir] {
		return pathErr("sync", dir, fs.ErrNotExist)
	}
	for n := range m.durable {
		if filepath.Dir(n) == dir && m.names[n] == nil {
			delete(m.durable, n)
		}
	}
	for n, ino := range m.names {
		if filepath.Dir(n) == dir {
			m.durable[n] = ino
		}
	}
	for d := range m.durDirs {
		if d != "/" && filepath.Dir(d) == dir && !m.dirs[d] {
			delete(m.durDirs, d)
		}
	}
	for d := range m.dirs {
		if d != "/" && filepath.Dir(d) == dir {
			m.durDirs[d] = true
		}
	}
	return nil
}

// Lock implements ledger.FS with an in-memory lock; the holder's pid is this process's.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if !m.dirs[filepath.Dir(name)] {
		return nil, pathErr("lock", name, fs.ErrNotExist)
	}
	if m.locks[name] {
		return nil, &ledger.LockedError{Path: name, PID: os.Getpid()}
	}
	m.locks[name] = true
	return closerFunc(func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.locks, name)
		return nil
	}), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// ReadFile returns the current content of a file (nil, false if it does not exist).
func (m *MemFS) ReadFile(name string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino, ok := m.names[clean(name)]
	if !ok {
		return nil, false
	}
	return bytes.Clone(ino.data), true
}

// WriteFile sets a file's content, durably (a test fixture, not a simulated write).
func (m *MemFS) WriteFile(name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if !m.dirs[filepath.Dir(name)] {
		return pathErr("write", name, fs.ErrNotExist)
	}
	ino := &inode{durable: bytes.Clone(data), data: bytes.Clone(data)}
	m.names[name] = ino
	m.durable[name] = ino
	return nil
}

// MkdirAll creates dir and its parents, durably (a test fixture).
func (m *MemFS) MkdirAll(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := clean(dir); !m.dirs[d]; d = filepath.Dir(d) {
		m.dirs[d], m.durDirs[d] = true, true
	}
}

// List returns the names of the files directly in dir, sorted.
func (m *MemFS) List(dir string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	var out []string
	for n := range m.names {
		if filepath.Dir(n) == dir {
			out = append(out, filepath.Base(n))
		}
	}
	sort.Strings(out)
	return out
}

// Unsynced reports how many operations on name are not yet durable.
func (m *MemFS) Unsynced(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ino, ok := m.names[clean(name)]; ok {
		return len(ino.ops)
	}
	return 0
}

// CrashMode says what a power loss does to each unsynced file operation.
type CrashMode int

const (
	// DropUnsynced: every unsynced operation is lost (LazyFS's lose-unfsynced-writes).
	DropUnsynced CrashMode = iota
	// KeepUnsynced: every unsynced operation reached the disk (what a process kill leaves).
	KeepUnsynced
	// TornUnsynced: a prefix of the unsynced operations reached the disk, the last of them
	// possibly only in part, the rest of its bytes left as zeros or garbage (appends that reach
	// the disk in order).
	TornUnsynced
	// RandomUnsynced: each unsynced operation is independently applied, dropped, applied in
	// part, or replaced by random bytes (SQLite's crash VFS); the file grows to the end of the
	// last surviving write, holes reading as zeros.
	RandomUnsynced
)

// Crash returns the filesystem a power loss would leave now, choosing with rng; m itself is
// unchanged, so one state can be crashed many ways. Unsynced directory entries are lost (their
// durable predecessors come back), and locks are released.
func (m *MemFS) Crash(mode CrashMode, rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := NewMemFS()
	for d := range m.durDirs {
		ok := true
		for a := d; a != "/"; a = filepath.Dir(a) {
			ok = ok && m.durDirs[a]
		}
		if ok {
			out.dirs[d], out.durDirs[d] = true, true
		}
	}
	done := map[*inode]*inode{}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range m.durable {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		if !out.dirs[filepath.Dir(n)] {
			continue
		}
		ino := m.durable[n]
		c, ok := done[ino]
		if !ok {
			data := ino.crash(mode, rng)
			c = &inode{durable: data, data: bytes.Clone(data)}
			done[ino] = c
		}
		out.names[n], out.durable[n] = c, c
	}
	return out
}

// apply performs o on the current content and records it as unsynced.
func (ino *inode) apply(o op) {
	ino.data = o.on(ino.data)
	ino.ops = append(ino.ops, o)
}

func (o op) on(data []byte) []byte {
	if o.trunc {
		if int64(len(data)) >= o.size {
			return data[:o.size]
		}
		return append(data, make([]byte, o.size-int64(len(data)))...)
	}
	end := o.off + int64(len(o.data))
	if int64(len(data)) < end {
		data = append(data, make([]byte, end-int64(len(data)))...)
	}
	copy(data[o.off:], o.data)
	return data
}

func (ino *inode) crash(mode CrashMode, rng *rand.Rand) []byte {
	data := bytes.Clone(ino.durable)
	switch mode {
	case DropUnsynced:
	case KeepUnsynced:
		for _, o := range ino.ops {
			data = o.on(data)
		}
	case TornUnsynced:
		k := rng.IntN(len(ino.ops) + 1) // ops fully applied
		for _, o := range ino.ops[:k] {
			data = o.on(data)
		}
		if k < len(ino.ops) && !ino.ops[k].trunc && rng.IntN(2) == 0 {
			data = ino.ops[k].partial(rng).on(data)
		}
	case RandomUnsynced:
		for _, o := range ino.ops {
			switch rng.IntN(4) {
			case 0:
				data = o.on(data)
			case 1: // dropped
			case 2:
				if !o.trunc {
					data = o.partial(rng).on(data)
				}
			case 3:
				if o.trunc {
					data = o.on(data)
				} else {
					g := op{off: o.off, data: make([]byte, len(o.data))}
					for i := range g.data {
						g.data[i] = byte(rng.IntN(256))
					}
					data = g.on(data)
				}
			}
		}
	}
	return data
}

// partial is o with only a prefix of its bytes written, the rest zeros or random bytes.
func (o op) partial(rng *rand.Rand) op {
	p := op{off: o.off, data: bytes.Clone(o.data)}
	cut := rng.IntN(len(o.data) + 1)
	garbage := rng.IntN(2) == 0
	for i := cut; i < len(p.data); i++ {
		if garbage {
			p.data[i] = byte(rng.IntN(256))
		} else {
			p.data[i] = 0
		}
	}
	return p
}

// handle is an open MemFS file.
type handle struct {
	fs     *MemFS
	ino    *inode
	name   string
	flag   int
	off    int64
	closed bool
}

func (h *handle) writable() bool { return h.flag&(os.O_WRONLY|os.O_RDWR) != 0 }

func (h *handle) Read(p []byte) (int, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return 0, pathErr("read", h.name, fs.ErrClosed)
	}
	if h.flag&os.O_WRONLY != 0 {
		return 0, pathErr("read", h.name, fmt.Errorf("bad file descriptor"))
	}
	if h.off >= int64(len(h.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, h.ino.data[h.off:])
	h.off += int64(n)
	return n, nil
}

func (h *handle) Write(p []byte) (int, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return 0, pathErr("write", h.name, fs.ErrClosed)
	}
	if !h.writable() {
		return 0, pathErr("write", h.name, fmt.Errorf("bad file descriptor"))
	}
	if h.flag&os.O_APPEND != 0 {
		h.off = int64(len(h.ino.data))
	}
	h.ino.apply(op{off: h.off, data: bytes.Clone(p)})
	h.off += int64(len(p))
	return len(p), nil
}

func (h *handle) Sync() error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return pathErr("sync", h.name, fs.ErrClosed)
	}
	h.ino.durable = bytes.Clone(h.ino.data)
	h.ino.ops = nil
	return nil
}

func (h *handle) Truncate(size int64) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return pathErr("truncate", h.name, fs.ErrClosed)
	}
	if !h.writable() {
		return pathErr("truncate", h.name, fmt.Errorf("bad file descriptor"))
	}
	h.ino.apply(op{trunc: true, size: size})
	return nil
}

func (h *handle) Close() error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return pathErr("close", h.name, fs.ErrClosed)
	}
	h.closed = true
	return nil
}

// Survival is what a power loss does to one unsynced write in CrashWith.
type Survival struct {
	Drop bool // the write is lost (its bytes read as zeros if a later write extends the file)
	// Cut, when Keep is false and Drop is false, keeps only the write's first Cut bytes; the rest
	// read as zeros (0 <= Cut < len).
	Cut  int
	Keep bool // the whole write reached the disk
}

// CrashWith returns the filesystem a power loss would leave now, with choose deciding each
// unsynced write of each file (name, its index among that file's unsynced operations, its
// length): a deterministic Crash for enumerating every outcome. Unsynced truncations are kept;
// directory entries and locks are as for Crash.
func (m *MemFS) CrashWith(choose func(name string, i, size int) Survival) *MemFS {
	out := m.Crash(DropUnsynced, nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	for n, c := range out.names {
		ino := m.durable[n]
		data := bytes.Clone(ino.durable)
		for i, o := range ino.ops {
			if o.trunc {
				data = o.on(data)
				continue
			}
			switch s := choose(n, i, len(o.data)); {
			case s.Keep:
				data = o.on(data)
			case s.Drop:
			default:
				p := op{off: o.off, data: bytes.Clone(o.data)}
				clear(p.data[s.Cut:])
				data = p.on(data)
			}
		}
		c.durable, c.data = data, bytes.Clone(data)
	}
	return out
}

// UnsyncedWrites returns the lengths of name's unsynced writes, in order (0 for a truncation).
func (m *MemFS) UnsyncedWrites(name string) []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino, ok := m.names[clean(name)]
	if !ok {
		return nil
	}
	out := make([]int, len(ino.ops))
	for i, o := range ino.ops {
		if !o.trunc {
			out[i] = len(o.data)
		}
	}
	return out
}
