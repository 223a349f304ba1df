package ledger_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
)

// TestOSFSOpensAsOSDoes: the real filesystem's plain descriptors behave as os.OpenFile's do:
// the same errors (a *fs.PathError matching fs.ErrNotExist or fs.ErrExist), the permission,
// appends at the end; the lock truncates the file to this pid.
func TestOSFSOpensAsOSDoes(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	var pe *fs.PathError
	if _, err := (ledger.OSFS{}).OpenFile(name, os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != name {
		t.Fatalf("missing file: %v", err)
	}
	for i, want := range []string{"a", "ab"} {
		flag := os.O_WRONLY | os.O_APPEND
		if i == 0 {
			flag |= os.O_CREATE | os.O_EXCL
		}
		f, err := (ledger.OSFS{}).OpenFile(name, flag, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(want[i:])); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(name); string(got) != want {
			t.Fatalf("after write %d: %q, want %q", i, got, want)
		}
	}
	if _, err := (ledger.OSFS{}).OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("exclusive create of an existing file: %v", err)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm()&^0o600 != 0 {
		t.Fatalf("mode: %v %v", fi.Mode(), err)
	}
	if err := (ledger.OSFS{}).SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	// The lock file holds this process's pid, written through the descriptor holding the lock.
	lock := filepath.Join(dir, ledger.LockName)
	if err := os.WriteFile(lock, []byte("1234567890 stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := (ledger.OSFS{}).Lock(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, _ := os.ReadFile(lock); string(got) != strconv.Itoa(os.Getpid())+"\n" {
		t.Fatalf("lock file holds %q, want this pid", got)
	}
	if _, err := (ledger.OSFS{}).Lock(lock); !errors.Is(err, ledger.ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
}
