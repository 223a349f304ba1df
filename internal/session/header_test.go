package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/session"
)

// TestLedgerOfAnotherSession: another session's ledger copied into a session's directory is
// refused by Open and LoadAs, naming both ids; the right id opens it.
func TestLedgerOfAnotherSession(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"a1", "b2"} {
		s, err := session.Create(filepath.Join(root, id), session.Meta{ID: id}, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	data, err := os.ReadFile(filepath.Join(root, "a1", ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "b2", ledger.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "b2")
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ledger.ErrCorrupt) || !strings.Contains(err.Error(), "session b2") || !strings.Contains(err.Error(), "session a1") {
			t.Fatalf("%s: err = %v, want ErrCorrupt naming b2 and a1", what, err)
		}
	}
	_, _, err = session.LoadAs(dir, "b2")
	check("LoadAs", err)
	s, _, err := session.Open(dir, session.Options{ID: "b2"})
	if s != nil {
		s.Close()
	}
	check("Open", err)
	// The writer lock was released: the session opens as what it is.
	s, _, err = session.Open(dir, session.Options{ID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if st, _, err := session.LoadAs(dir, "a1"); err != nil || st.Header.ID != "a1" {
		t.Fatalf("LoadAs a1 = %v", err)
	}
}
