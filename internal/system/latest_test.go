package system

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLatestSessionSkipsAnIncompleteOne: a session directory whose ledger has no complete
// first line (a power loss before the session's first fsync) is not the one continued; the
// newest complete one is.
func TestLatestSessionSkipsAnIncompleteOne(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	root := ProjectSessions(home, cwd)
	write := func(id, content string, age time.Duration) {
		dir := filepath.Join(root, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "ledger.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("complete", `{"v":1,"seq":1,"kind":"header"}`+"\n", time.Hour)
	write("empty", "", 2*time.Minute)
	write("torn", `{"v":3,"seq":1,"synced":0,"kind":"hea`, time.Minute)
	sd, err := LatestSession(home, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if sd.ID != "complete" {
		t.Errorf("continued %q, want the complete session", sd.ID)
	}
	all, _ := ListSessions(root)
	if len(all) != 3 {
		t.Errorf("ListSessions = %v, want all three listed", all)
	}
	os.RemoveAll(filepath.Join(root, "complete"))
	if _, err := LatestSession(home, cwd); err == nil {
		t.Error("with only incomplete sessions left, LatestSession found one")
	}
}
