package system

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// sessionRun runs one prompt in the session ch of the workspace dir and returns the session's
// directory and the run's error.
func sessionRun(t *testing.T, dir, home string, ch SessionChoice, adapter llm.Model) (string, *kernel.Outcome, error) {
	t.Helper()
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := Open(context.Background(), Options{Script: scenario, Adapter: adapter, Dir: dir, Home: home, Getenv: env(nil), NoTools: true, Session: ch})
	if err != nil {
		return "", nil, err
	}
	sdir := rt.Session.Dir()
	out, err := rt.Run(context.Background(), llm.UserText("hello"))
	if cerr := rt.Close(); err == nil && cerr != nil {
		t.Fatal(cerr)
	}
	return sdir, out, err
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRolledBackSessionIsRefused: a session's ledger replaced by an older copy of itself — a
// valid, shorter ledger — is refused on open (ErrRollback naming the anchored and the found
// heads); read-only checks write no anchor; removing the anchor accepts the older ledger.
func TestRolledBackSessionIsRefused(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	sdir, _, err := sessionRun(t, dir, home, SessionChoice{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ledgerPath := filepath.Join(sdir, ledger.FileName)
	old := filepath.Join(t.TempDir(), "old.jsonl")
	copyFile(t, ledgerPath, old)
	if _, _, err := sessionRun(t, dir, home, SessionChoice{Mode: SessionContinue}, nil); err != nil {
		t.Fatal(err)
	}
	copyFile(t, old, ledgerPath)

	// A read-only check reports it and writes nothing.
	anchors, _ := os.ReadDir(AnchorsDir(home))
	before, err := os.ReadFile(anchorPath(home, sdir))
	if err != nil || len(anchors) != 1 {
		t.Fatalf("anchors: %d files, %v", len(anchors), err)
	}
	l, _, err := ledger.OpenReadOnly(sdir, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = CheckAnchor(home, sdir, filepath.Base(sdir), l)
	l.Close()
	if !errors.Is(err, ledger.ErrRollback) || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("CheckAnchor = %v, want ErrRollback", err)
	}

	for _, ch := range []SessionChoice{{Mode: SessionContinue}, {Mode: SessionResume, Ref: filepath.Base(sdir)}, {Mode: SessionAt, Ref: sdir}} {
		_, _, err := sessionRun(t, dir, home, ch, nil)
		if !errors.Is(err, ledger.ErrRollback) || !strings.Contains(err.Error(), "was rolled back") || !strings.Contains(err.Error(), "now ends at seq") {
			t.Fatalf("mode %d: err = %v, want ErrRollback naming both heads", ch.Mode, err)
		}
	}
	if after, _ := os.ReadFile(anchorPath(home, sdir)); string(after) != string(before) {
		t.Fatal("a refused open changed the anchor")
	}
	if st, err := os.Stat(anchorPath(home, sdir)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("anchor mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	// The recovery the error names: remove the anchor to accept the older ledger.
	if err := os.Remove(anchorPath(home, sdir)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sessionRun(t, dir, home, SessionChoice{Mode: SessionContinue}, nil); err != nil {
		t.Fatalf("after removing the anchor: %v", err)
	}
}

// TestCopiedSessionDirectoryIsRolledBack: the anchor is outside the session's directory, so
// an older copy of the whole directory put back is a rollback too.
func TestCopiedSessionDirectoryIsRolledBack(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	sdir, _, err := sessionRun(t, dir, home, SessionChoice{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup")
	if err := os.CopyFS(backup, os.DirFS(sdir)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sessionRun(t, dir, home, SessionChoice{Mode: SessionContinue}, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(sdir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(sdir, os.DirFS(backup)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sessionRun(t, dir, home, SessionChoice{Mode: SessionContinue}, nil); !errors.Is(err, ledger.ErrRollback) {
		t.Fatalf("err = %v, want ErrRollback", err)
	}
}

// TestLedgerOfAnotherSessionIsRefused: another session's ledger copied into a session's
// directory is refused wherever the session is resolved, naming both ids.
func TestLedgerOfAnotherSessionIsRefused(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	a, _, err := sessionRun(t, dir, home, SessionChoice{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := sessionRun(t, dir, home, SessionChoice{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(a, ledger.FileName), filepath.Join(b, ledger.FileName))
	idA, idB := filepath.Base(a), filepath.Base(b)
	for _, ch := range []SessionChoice{{Mode: SessionResume, Ref: idB}, {Mode: SessionAt, Ref: b}, {Mode: SessionFork, Ref: idB}} {
		_, _, err := sessionRun(t, dir, home, ch, nil)
		if !errors.Is(err, ledger.ErrCorrupt) || !strings.Contains(err.Error(), "session "+idA) || !strings.Contains(err.Error(), "session "+idB) {
			t.Fatalf("mode %d: err = %v, want ErrCorrupt naming %s and %s", ch.Mode, err, idA, idB)
		}
	}
}

// removingModel removes a directory when it is first asked, then answers as m.
type removingModel struct {
	m    llm.Model
	dir  func() string
	done bool
}

func (r *removingModel) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
	if !r.done {
		r.done = true
		if err := os.RemoveAll(r.dir()); err != nil {
			panic(err)
		}
	}
	return r.m.Stream(ctx, req, emit)
}

// TestSessionRemovedDuringRunFails: a session directory removed while a run writes to it
// makes the run fail with ErrSessionGone (status failed), and nothing is anchored for it.
func TestSessionRemovedDuringRunFails(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	sdir, _, err := sessionRun(t, dir, home, SessionChoice{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(anchorPath(home, sdir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := script.Parse([]byte("version: 1\nturns:\n  - text: hi\n  - text: again\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := sessionRun(t, dir, home, SessionChoice{Mode: SessionContinue}, &removingModel{m: m, dir: func() string { return sdir }})
	if !errors.Is(err, ErrSessionGone) || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("err = %v, want ErrSessionGone", err)
	}
	if out == nil || out.Status != kernel.StatusFailed {
		t.Fatalf("outcome = %+v, want status failed", out)
	}
	if after, _ := os.ReadFile(anchorPath(home, sdir)); string(after) != string(before) {
		t.Fatal("the anchor moved for a run whose ledger was gone")
	}
}

func TestSessionIDOf(t *testing.T) {
	for dir, want := range map[string]string{
		"/h/sessions/proj-1a2b/0193ab": "0193ab",
		"/tmp/mysession":               "mysession",
		"/h/runs/r20260101T000000.000000Z-abcdef/stages/research-1":          "r20260101T000000.000000Z-abcdef-research-1",
		"/h/runs/r20260101T000000.000000Z-abcdef/stages/ticket-planning-3.2": "r20260101T000000.000000Z-abcdef-ticket-planning-3",
		"/h/x/stages/research-1": "research-1",
	} {
		if got := SessionIDOf(dir); got != want {
			t.Errorf("SessionIDOf(%s) = %s, want %s", dir, got, want)
		}
	}
}
