package session_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/session"
)

// readCounter counts the opens of ledger files for reading.
type readCounter struct {
	ledger.OSFS
	n atomic.Int32
}

func (c *readCounter) OpenFile(name string, flag int, perm fs.FileMode) (ledger.File, error) {
	if filepath.Base(name) == ledger.FileName && flag == os.O_RDONLY {
		c.n.Add(1)
	}
	return c.OSFS.OpenFile(name, flag, perm)
}

// TestOpenReadsTheLedgerOnce: Open verifies and reduces the session in one pass over the file.
func TestOpenReadsTheLedgerOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s1")
	s, err := session.Create(dir, session.Meta{ID: "s1"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if err := s.SetFact("name", v); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	c := &readCounter{}
	s, _, err = session.Open(dir, session.Options{Ledger: ledger.Options{FS: c}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Fact("name"); got != "c" {
		t.Errorf("fact name = %q, want c", got)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("Open read the ledger %d times, want once", n)
	}
}
