package ledger_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

// TestDeferredCreate: with Options.Deferred, Create fsyncs nothing; the records written before
// the first fsync are version 3 lines with synced 0; the first synced append fsyncs the file
// once and then the directories Create made, innermost first.
func TestDeferredCreate(t *testing.T) {
	m := ledgertest.NewMemFS()
	m.MkdirAll("/home")
	var ops []string
	o := testOptions(&ledgertest.FaultFS{FS: m, Inject: func(op ledgertest.Op) *ledgertest.Fault {
		if op.Kind == "sync" || op.Kind == "syncdir" {
			ops = append(ops, op.Kind+" "+op.Name)
		}
		return nil
	}}, "r")
	o.Deferred = true
	l, err := ledger.Create(memDir, header(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 0 {
		t.Fatalf("Create fsynced %q", ops)
	}
	if _, err := l.Append(ledger.Entry{Kind: "entry", Body: map[string]int{"n": 1}, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ledger.Entry{Kind: "entry", Body: map[string]int{"n": 2}}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]string{"sync " + memPath, "syncdir " + memDir, "syncdir /home/sessions", "syncdir /home"})
	if fmt.Sprint(ops) != want {
		t.Fatalf("fsyncs %q, want %s", ops, want)
	}
	if _, err := l.Append(ledger.Entry{Kind: "entry", Body: map[string]int{"n": 3}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := m.ReadFile(memPath)
	ls := lines(data)
	for i, prefix := range []string{`{"v":1,"seq":1,`, `{"v":3,"seq":2,"synced":0,`, `{"v":3,"seq":3,"synced":0,`, `{"v":1,"seq":4,`} {
		if string(ls[i][:len(prefix)]) != prefix {
			t.Errorf("line %d: %.40s, want %s…", i+1, ls[i], prefix)
		}
	}
	if _, _, err := ledger.Open(memDir, testOptions(m.Crash(ledgertest.DropUnsynced, nil), "o")); err != nil {
		t.Fatal(err)
	}
}

// TestDeferredCreatePowerLoss: a power loss at any point of a deferred Create and the NoSync
// records after it, in every crash mode, leaves no ledger (its directory entries not durable),
// one without a complete header (ErrIncomplete: nothing was acknowledged), or one that opens
// cleanly; once the first synced append returned, every record is there.
func TestDeferredCreatePowerLoss(t *testing.T) {
	for crashAt := 1; ; crashAt++ {
		m := ledgertest.NewMemFS()
		m.MkdirAll("/home")
		var states []*ledgertest.MemFS
		n := 0
		fsys := &ledgertest.FaultFS{FS: m, Inject: func(ledgertest.Op) *ledgertest.Fault {
			if n++; n == crashAt {
				for mode := ledgertest.DropUnsynced; mode <= ledgertest.RandomUnsynced; mode++ {
					for seed := range uint64(8) {
						states = append(states, m.Crash(mode, rand.New(rand.NewPCG(seed, uint64(crashAt)))))
					}
				}
			}
			return nil
		}}
		o := testOptions(fsys, "r")
		o.Deferred = true
		l, err := ledger.Create(memDir, header(), o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := l.Append(ledger.Entry{Kind: "entry", Body: map[string]any{"n": i, "text": "a fact or the run's start"}, NoSync: true}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Append(ledger.Entry{Kind: "intent", Body: map[string]int{"n": 9}}); err != nil {
			t.Fatal(err)
		}
		done := n < crashAt // the crash point is after the synced append returned
		l.Close()
		if done {
			if crashAt < 8 {
				t.Fatalf("only %d operations", crashAt)
			}
			return
		}
		for i, c := range states {
			l, rep, err := ledger.Open(memDir, testOptions(c, "o"))
			switch {
			case errors.Is(err, fs.ErrNotExist), errors.Is(err, ledger.ErrIncomplete):
			case err != nil:
				t.Fatalf("power loss before op %d, state %d: %v", crashAt, i, err)
			default:
				if rep.HeadSeq < 1 {
					t.Fatalf("power loss before op %d, state %d: opened empty", crashAt, i)
				}
				l.Close()
			}
		}
	}
}

// TestSyncedZeroAfterADamagedHeader: a header lost to a power loss with records written before
// it was durable (synced 0) after it is a ledger whose creation never finished; a version 1
// record after a damaged header is corruption.
func TestSyncedZeroAfterADamagedHeader(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := ledger.BuildLineForTest(1, "s1", "", ledger.KindHeader, ts, []byte(`{"type":"session","id":"s1","format":1}`), "")
	torn := append(make([]byte, 0, len(h)), h[:len(h)/2]...)
	torn = append(torn, '\n')
	prev := string(h[len(h)-67 : len(h)-3])
	next := ledger.BuildSyncedLineVersionForTest(3, 2, 0, "e2", "", "entry", ts, []byte(`{"n":1}`), prev)
	if _, _, _, err := openBytes(join(torn, next)); !errors.Is(err, ledger.ErrIncomplete) {
		t.Fatalf("damaged header, synced-0 record after it: %v, want ErrIncomplete", err)
	}
	v1 := ledger.BuildLineForTest(2, "e2", "", "entry", ts, []byte(`{"n":1}`), prev)
	if _, _, _, err := openBytes(join(torn, v1)); !errors.Is(err, ledger.ErrCorrupt) {
		t.Fatalf("damaged header, version 1 record after it: %v, want ErrCorrupt", err)
	}
	// synced 0 is version 3 only: a version 2 line claiming it is not one the writer writes.
	v2 := ledger.BuildSyncedLineVersionForTest(2, 2, 0, "e2", "", "entry", ts, []byte(`{"n":1}`), prev)
	if _, _, _, err := openBytes(join(h, v2)); !errors.Is(err, ledger.ErrCorrupt) {
		t.Fatalf("a version 2 line with synced 0: %v, want ErrCorrupt", err)
	}
}

// TestHasHeaderLine: a ledger Create wrote has its header line; an empty file, a torn first
// line and a missing file do not.
func TestHasHeaderLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "s1")
	l, err := ledger.Create(dir, header(), ledger.Options{Deferred: true})
	if err != nil {
		t.Fatal(err)
	}
	if !ledger.HasHeaderLine(dir, ledger.Options{}) {
		t.Error("a created ledger has no header line")
	}
	l.Close()
	for name, content := range map[string]string{"empty": "", "torn": `{"v":1,"seq":1,"kind":"hea`} {
		d := filepath.Join(root, name)
		os.MkdirAll(d, 0o700)
		os.WriteFile(filepath.Join(d, ledger.FileName), []byte(content), 0o600)
		if ledger.HasHeaderLine(d, ledger.Options{}) {
			t.Errorf("%s: reported a header line", name)
		}
	}
	if ledger.HasHeaderLine(filepath.Join(root, "missing"), ledger.Options{}) {
		t.Error("a missing ledger has a header line")
	}
}
