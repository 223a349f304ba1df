package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
)

// readsCounted counts the opens of ledger files for reading.
type readsCounted struct {
	ledger.OSFS
	n int
}

func (c *readsCounted) OpenFile(name string, flag int, perm fs.FileMode) (ledger.File, error) {
	if filepath.Base(name) == ledger.FileName && flag == os.O_RDONLY {
		c.n++
	}
	return c.OSFS.OpenFile(name, flag, perm)
}

// TestCreateReadsNothingBack: Create builds the state from the header record it writes, never
// opening the new ledger for reading, and that state is the one a reader of the file builds.
func TestCreateReadsNothingBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s1")
	c := &readsCounted{}
	s, err := Create(dir, Meta{ID: "s1", Cwd: "/w"}, Options{Ledger: ledger.Options{FS: c}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c.n != 0 {
		t.Errorf("Create read the ledger %d times, want none", c.n)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	want, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := s.st
	if got.Header.ID != "s1" || got.Header.Bindings[BindCwd] != "/w" || got.Created.IsZero() ||
		!reflect.DeepEqual(got.Header, want.Header) || !got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) {
		t.Errorf("Create's state: header %+v created %v updated %v\nLoad's: header %+v created %v updated %v",
			got.Header, got.Created, got.Updated, want.Header, want.Created, want.Updated)
	}
}
