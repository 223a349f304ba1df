package ledger_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

// holeFixture writes a header, one synced record, then three NoSync records and a synced one
// (a result riding on the next intent's fsync), and returns the file and the records.
func holeFixture(t *testing.T) ([]byte, []ledger.Record) {
	t.Helper()
	m := ledgertest.NewMemFS()
	l, err := ledger.Create(memDir, header(), testOptions(m, "r"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []ledger.Record
	for r := range l.Records() {
		recs = append(recs, r)
	}
	for i, noSync := range []bool{false, true, true, true, false} {
		r, err := l.Append(ledger.Entry{Kind: "entry", Body: map[string]any{"n": i, "text": "hello world"}, NoSync: noSync})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	l.Close()
	data, _ := m.ReadFile(memPath)
	return data, recs
}

// TestSyncedMember: a record written while earlier ones were not yet durable is a version 2
// line naming the last durable seq; one written with everything before it durable is version 1.
func TestSyncedMember(t *testing.T) {
	data, recs := holeFixture(t)
	want := []int64{0, 0, 0, 2, 2, 2} // seq 3 follows durable seq 2; seqs 4–6 still only have 2
	for i, r := range recs {
		if r.Synced != want[i] {
			t.Errorf("seq %d: synced %d, want %d", r.Seq, r.Synced, want[i])
		}
	}
	ls := lines(data)
	if !bytes.HasPrefix(ls[3], []byte(`{"v":2,"seq":4,"synced":2,"id":`)) || !bytes.HasPrefix(ls[2], []byte(`{"v":1,"seq":3,"id":`)) {
		t.Fatalf("lines:\n%s%s", ls[2], ls[3])
	}
	// The file reads back with the same records.
	_, l, rep, err := openBytes(data)
	if err != nil || rep.Torn != nil {
		t.Fatalf("%v %+v", err, rep)
	}
	i := 0
	for r, err := range l.Records() {
		if err != nil || r.Synced != want[i] || r.H != recs[i].H {
			t.Fatalf("record %d: %+v %v", i, r, err)
		}
		i++
	}
	l.Close()
}

// TestHoleInTheUnsyncedWindow: a power loss that drops (or garbles) an unsynced record and keeps
// later ones leaves a hole that Open repairs as a torn tail back to the last record before it,
// with evidence, because every complete record after it declares that it was written before
// the hole was durable. The same damage before a record that says the damaged one was durable
// (a version 1 line, a synced member at or past it, a record that does not hash to itself) is
// corruption, as it always was.
func TestHoleInTheUnsyncedWindow(t *testing.T) {
	data, recs := holeFixture(t)
	ls := lines(data)
	off := func(seq int) int64 { return recs[seq-1].Offset }
	zero := func(b []byte) []byte { return make([]byte, len(b)) }
	garble := func(b []byte) []byte { return bytes.Repeat([]byte("#"), len(b)) }
	torn := func(b []byte) []byte { return append(bytes.Clone(b[:len(b)/2]), make([]byte, len(b)-len(b)/2)...) }
	for _, tc := range []struct {
		name string
		file []byte
		keep int // records kept by the repair
	}{
		{"seq 4 dropped, 5 and 6 kept", join(ls[0], ls[1], ls[2], zero(ls[3]), ls[4], ls[5]), 3},
		{"seq 4 garbled, 5 and 6 kept", join(ls[0], ls[1], ls[2], garble(ls[3]), ls[4], ls[5]), 3},
		{"seq 4 and 5 dropped, 6 kept", join(ls[0], ls[1], ls[2], zero(ls[3]), zero(ls[4]), ls[5]), 3},
		{"seq 5 torn, 6 kept", join(ls[0], ls[1], ls[2], ls[3], torn(ls[4]), ls[5]), 4},
		{"seq 4 dropped, 6 kept", join(ls[0], ls[1], ls[2], zero(ls[3]), ls[4][:10], zero(ls[4][10:]), ls[5]), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, l, rep, err := openBytes(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			checkRepaired(t, m, rep, tc.file, int64(tc.keep))
			got, _ := m.ReadFile(memPath)
			if !bytes.HasPrefix(got, data[:off(tc.keep+1)]) {
				t.Fatal("the records before the hole changed")
			}
		})
	}
	ts := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	claims := func(synced int64) []byte {
		return ledger.BuildSyncedLineForTest(6, synced, recs[5].ID+"x", "", "entry", ts, []byte(`{"n":9}`), recs[4].H)
	}
	for _, tc := range []struct {
		name string
		file []byte
		seq  int
	}{
		{"hole before a version 1 record", join(ls[0], ls[1], ls[2], zero(ls[3]), ls[4], ledger.BuildLineForTest(6, "v1", "", "entry", ts, []byte(`{}`), recs[4].H)), 4},
		{"hole before a record claiming it durable", join(ls[0], ls[1], ls[2], zero(ls[3]), ls[4], claims(4)), 4},
		{"hole before a record claiming later seqs durable", join(ls[0], ls[1], ls[2], zero(ls[3]), ls[4], claims(5)), 4},
		{"hole before a record that does not hash to itself", join(ls[0], ls[1], ls[2], zero(ls[3]), ls[4], bytes.Replace(ls[5], []byte(`"n":4`), []byte(`"n":7`), 1)), 4},
		{"a synced record damaged before a kept one", join(ls[0], zero(ls[1]), ls[2], ls[3]), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := openBytes(tc.file)
			wantCorrupt(t, err, off(tc.seq), int64(tc.seq))
		})
	}
}

// TestUnsyncedWindowIsBounded: however many NoSync records are appended, the bytes written
// since the last fsync never exceed MaxLineBytes (the most a torn tail may span), so a hole
// can always be told from corruption.
func TestUnsyncedWindowIsBounded(t *testing.T) {
	m := ledgertest.NewMemFS()
	l, err := ledger.Create(memDir, header(), testOptions(m, "w"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pad := strings.Repeat("x", 200<<10)
	syncs := 0
	for i := range 30 {
		if _, err := l.Append(ledger.Entry{Kind: "entry", Body: map[string]any{"i": i, "pad": pad[:(i%5+1)*40<<10]}, NoSync: true}); err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, n := range m.UnsyncedWrites(memPath) {
			total += n
		}
		if total > ledger.MaxLineBytes {
			t.Fatalf("after append %d: %d unsynced bytes", i, total)
		}
		if i > 0 && len(m.UnsyncedWrites(memPath)) == 1 {
			syncs++ // the window forced an fsync before this record
		}
	}
	if syncs == 0 {
		t.Fatal("the window never forced an fsync: the test wrote too little")
	}
}

// TestFirstWriteAfterOpenSyncsWhatItFound: a writer killed with NoSync records in the page
// cache leaves them readable but not durable; the next writer's records would claim them
// durable, so its first write fsyncs them first. Closing a ledger it only read fsyncs nothing.
func TestFirstWriteAfterOpenSyncsWhatItFound(t *testing.T) {
	m := ledgertest.NewMemFS()
	dead := false
	ffs := &ledgertest.FaultFS{FS: m, Inject: func(o ledgertest.Op) *ledgertest.Fault {
		if dead && o.Kind == "sync" {
			return &ledgertest.Fault{Err: errCrash} // the writer dies before its Close syncs
		}
		return nil
	}}
	l, err := ledger.Create(memDir, header(), testOptions(ffs, "w"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := l.Append(ledger.Entry{Kind: "entry", Body: i, NoSync: true}); err != nil {
			t.Fatal(err)
		}
	}
	dead = true
	l.Close()
	if n := len(m.UnsyncedWrites(memPath)); n != 2 {
		t.Fatalf("%d unsynced writes left by the dead writer, want 2", n)
	}
	l, _, err = ledger.Open(memDir, testOptions(m, "o"))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if n := len(m.UnsyncedWrites(memPath)); n != 2 {
		t.Fatalf("open and close without a write synced: %d unsynced writes left", n)
	}
	l, _, err = ledger.Open(memDir, testOptions(m, "p"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := l.Append(ledger.Entry{Kind: "entry", Body: 9, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.UnsyncedWrites(memPath)); n != 1 || r.Synced != 0 {
		t.Fatalf("after the first write: %d unsynced writes, synced %d; want the found records fsynced first (1, a version 1 line)", n, r.Synced)
	}
}
