package ledger_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

// visitOpen opens file (on a fresh MemFS) with open and a Visit that collects the records, or
// fails at seq failAt.
func visitOpen(file []byte, readOnly bool, failAt int64) (*ledgertest.MemFS, *ledger.Ledger, *ledger.Report, []ledger.Record, error) {
	m := ledgertest.NewMemFS()
	m.MkdirAll(memDir)
	if err := m.WriteFile(memPath, file); err != nil {
		panic(err)
	}
	var seen []ledger.Record
	opts := testOptions(m, "o")
	opts.Visit = func(r ledger.Record) error {
		if r.Seq == failAt {
			return errStopVisit
		}
		seen = append(seen, r)
		return nil
	}
	open := ledger.Open
	if readOnly {
		open = ledger.OpenReadOnly
	}
	l, rep, err := open(memDir, opts)
	return m, l, rep, seen, err
}

var errStopVisit = errors.New("visit says stop")

// records reads l back with Records.
func records(t *testing.T, l *ledger.Ledger) []ledger.Record {
	t.Helper()
	var out []ledger.Record
	for r, err := range l.Records() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestVisitSeesEveryVerifiedRecord(t *testing.T) {
	data, recs := fixture(t, 5)
	torn := append(bytes.Clone(data), lines(data)[3][:40]...)
	for _, readOnly := range []bool{false, true} {
		// Intact: exactly the records, in order, as Records reads them.
		_, l, _, seen, err := visitOpen(data, readOnly, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seen, recs) || !reflect.DeepEqual(seen, records(t, l)) {
			t.Fatalf("readOnly %v: visited %+v, want %+v", readOnly, seen, recs)
		}
		l.Close()

		// A torn tail: Open visits the recovery record it appends; OpenReadOnly only reports it.
		_, l, rep, seen, err := visitOpen(torn, readOnly, 0)
		if err != nil || rep.Torn == nil {
			t.Fatalf("readOnly %v: %v %+v", readOnly, err, rep)
		}
		want := recs
		if !readOnly {
			if last := seen[len(seen)-1]; last.Kind != ledger.KindRecovery || last.Seq != rep.HeadSeq {
				t.Fatalf("the recovery record was not visited last: %+v", last)
			}
			want = records(t, l)
		}
		if !reflect.DeepEqual(seen, want) {
			t.Fatalf("readOnly %v, torn tail: visited %+v, want %+v", readOnly, seen, want)
		}
		l.Close()
	}
}

func TestVisitErrorStopsTheOpen(t *testing.T) {
	data, recs := fixture(t, 5)
	torn := append(bytes.Clone(data), lines(data)[3][:40]...)
	for _, file := range [][]byte{data, torn} {
		for _, readOnly := range []bool{false, true} {
			m, l, _, seen, err := visitOpen(file, readOnly, 3)
			if !errors.Is(err, errStopVisit) || l != nil || len(seen) != 2 {
				t.Fatalf("readOnly %v: got %v after %d records, want the Visit error after 2", readOnly, err, len(seen))
			}
			// Nothing was changed (not even the torn tail repaired) and the lock is free.
			if got, _ := m.ReadFile(memPath); !bytes.Equal(got, file) {
				t.Fatal("an open stopped by Visit changed the file")
			}
			l, _, err = ledger.Open(memDir, testOptions(m, "again"))
			if err != nil {
				t.Fatalf("open after a stopped open: %v", err)
			}
			l.Close()
		}
	}

	// An error on the recovery record: the repair is done, the error returned, the lock free.
	m, l, _, seen, err := visitOpen(torn, false, int64(len(recs))+1)
	if !errors.Is(err, errStopVisit) || l != nil || len(seen) != len(recs) {
		t.Fatalf("got %v after %d records, want the Visit error on the recovery record", err, len(seen))
	}
	l, rep, err := ledger.Open(memDir, testOptions(m, "again"))
	if err != nil || rep.Torn != nil || rep.HeadSeq != int64(len(recs))+1 {
		t.Fatalf("after a stopped repair: %v %+v", err, rep)
	}
	l.Close()
}

func TestVisitThenCorruption(t *testing.T) {
	data, recs := fixture(t, 5)
	ls := lines(data)
	file := join(ls[0], ls[1], ls[2], ls[4], ls[3], ls[5]) // seq 4 and 5 swapped
	_, _, _, seen, err := visitOpen(file, false, 0)
	wantCorrupt(t, err, recs[3].Offset, 4)
	if !reflect.DeepEqual(seen, recs[:3]) {
		t.Fatalf("visited %+v before the corruption, want the 3 records before it", seen)
	}
}

// TestCreateVisitsTheHeader: Create calls Visit with the header record it wrote, the record
// Records then reads back; an error from Visit fails Create and leaves no ledger.
func TestCreateVisitsTheHeader(t *testing.T) {
	m := ledgertest.NewMemFS()
	opts := testOptions(m, "o")
	var seen []ledger.Record
	opts.Visit = func(r ledger.Record) error { seen = append(seen, r); return nil }
	l, err := ledger.Create(memDir, header(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if back := records(t, l); len(seen) != 1 || !reflect.DeepEqual(seen, back) {
		t.Fatalf("visited %+v, Records reads %+v", seen, back)
	}
	l.Close()

	m = ledgertest.NewMemFS()
	opts = testOptions(m, "o")
	opts.Visit = func(ledger.Record) error { return errStopVisit }
	if _, err := ledger.Create(memDir, header(), opts); !errors.Is(err, errStopVisit) {
		t.Fatalf("Create with a failing Visit: %v", err)
	}
	if _, err := ledger.Create(memDir, header(), testOptions(m, "o")); err != nil {
		t.Fatalf("Create after a failed Create: %v", err)
	}
}
