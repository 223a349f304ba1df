package ledgertest

import (
	"io"
	"io/fs"
	"sync"

	"github.com/reinhq/rein/internal/ledger"
)

// Op is one filesystem operation as FaultFS sees it.
type Op struct {
	N    int    // 1-based position among all operations through this FaultFS
	Kind string // open, read, write, sync, truncate, close, mkdir, rename, remove, syncdir, lock
	Name string // the path
	Size int    // bytes, for write
}

// Fault is what Inject decides for an operation.
type Fault struct {
	Err error // returned by the operation (nil with Written set: a silent short write)
	// Written, for a write: bytes passed to the underlying file before failing (a short write).
	Written int
	// Before, if set, runs instead of the operation after Written bytes were passed on: a test
	// child uses it to kill itself at an exact write point. Err is then returned if it returns.
	Before func()
}

// FaultFS decorates an FS, asking Inject about every operation; a nil Fault lets it through.
type FaultFS struct {
	FS     ledger.FS
	Inject func(Op) *Fault

	mu sync.Mutex
	n  int
}

var _ ledger.FS = (*FaultFS)(nil)

// Ops is how many operations FaultFS has seen.
func (f *FaultFS) Ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *FaultFS) check(kind, name string, size int) *Fault {
	f.mu.Lock()
	f.n++
	o := Op{N: f.n, Kind: kind, Name: name, Size: size}
	f.mu.Unlock()
	if f.Inject == nil {
		return nil
	}
	flt := f.Inject(o)
	if flt != nil && flt.Before != nil && kind != "write" {
		flt.Before()
	}
	return flt
}

// OpenFile implements ledger.FS.
func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (ledger.File, error) {
	if flt := f.check("open", name, 0); flt != nil {
		return nil, flt.Err
	}
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

// Mkdir implements ledger.FS.
func (f *FaultFS) Mkdir(name string, perm fs.FileMode) error {
	if flt := f.check("mkdir", name, 0); flt != nil {
		return flt.Err
	}
	return f.FS.Mkdir(name, perm)
}

// Rename implements ledger.FS.
func (f *FaultFS) Rename(oldpath, newpath string) error {
	if flt := f.check("rename", newpath, 0); flt != nil {
		return flt.Err
	}
	return f.FS.Rename(oldpath, newpath)
}

// Remove implements ledger.FS.
func (f *FaultFS) Remove(name string) error {
	if flt := f.check("remove", name, 0); flt != nil {
		return flt.Err
	}
	return f.FS.Remove(name)
}

// SyncDir implements ledger.FS.
func (f *FaultFS) SyncDir(name string) error {
	if flt := f.check("syncdir", name, 0); flt != nil {
		return flt.Err
	}
	return f.FS.SyncDir(name)
}

// Lock implements ledger.FS.
func (f *FaultFS) Lock(name string) (io.Closer, error) {
	if flt := f.check("lock", name, 0); flt != nil {
		return nil, flt.Err
	}
	return f.FS.Lock(name)
}

type faultFile struct {
	ledger.File
	fs   *FaultFS
	name string
}

func (f *faultFile) Read(p []byte) (int, error) {
	if flt := f.fs.check("read", f.name, 0); flt != nil {
		return 0, flt.Err
	}
	return f.File.Read(p)
}

func (f *faultFile) Write(p []byte) (int, error) {
	flt := f.fs.check("write", f.name, len(p))
	if flt == nil {
		return f.File.Write(p)
	}
	n := 0
	if flt.Written > 0 {
		n, _ = f.File.Write(p[:min(flt.Written, len(p))])
	}
	if flt.Before != nil {
		flt.Before()
	}
	return n, flt.Err
}

func (f *faultFile) Sync() error {
	if flt := f.fs.check("sync", f.name, 0); flt != nil {
		return flt.Err
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if flt := f.fs.check("truncate", f.name, 0); flt != nil {
		return flt.Err
	}
	return f.File.Truncate(size)
}

func (f *faultFile) Close() error {
	f.fs.check("close", f.name, 0) // counted, never failed: the ledger cannot act on it
	return f.File.Close()
}
