package ledger_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
)

// TestAppendAll: a batch is checked whole before a byte is written: a later entry may name an
// earlier one of the batch as parent, check sees each record as it will be written, and one
// refusal (the ledger's or check's) writes nothing.
func TestAppendAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s1")
	l, err := ledger.Create(dir, header(), testOptions(nil, "r"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	path := filepath.Join(dir, ledger.FileName)
	before := readFile(t, path)
	refusal := errors.New("refused by check")
	for _, tc := range []struct {
		name  string
		es    []ledger.Entry
		check func(ledger.Record) error
		want  error
	}{
		{"duplicate within the batch", []ledger.Entry{{Kind: "a", ID: "d"}, {Kind: "a", ID: "d"}}, nil, ledger.ErrDuplicateID},
		{"unknown parent after a good entry", []ledger.Entry{{Kind: "a", ID: "p"}, {Kind: "a", Parent: "nope"}}, nil, ledger.ErrUnknownParent},
		{"check refuses the second", []ledger.Entry{{Kind: "a", ID: "c1"}, {Kind: "a", ID: "c2"}},
			func(r ledger.Record) error {
				if r.ID == "c2" {
					return refusal
				}
				return nil
			}, refusal},
	} {
		if _, err := l.AppendAll(tc.es, tc.check); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if got := readFile(t, path); !bytes.Equal(got, before) {
			t.Fatalf("%s: a refused batch changed the file:\n%s", tc.name, got)
		}
	}

	var seen []ledger.Record
	recs, err := l.AppendAll([]ledger.Entry{{Kind: "a", ID: "p"}, {Kind: "b", ID: "q", Parent: "p", Body: map[string]int{"n": 1}}},
		func(r ledger.Record) error { seen = append(seen, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Seq != 2 || recs[1].Seq != 3 || recs[1].ParentID != "p" || recs[1].Prev != recs[0].H {
		t.Fatalf("records: %+v", recs)
	}
	if len(seen) != 2 || seen[1].H != recs[1].H || string(seen[1].Body) != `{"n":1}` {
		t.Errorf("check saw %+v", seen)
	}
	if got := int64(len(readFile(t, path))); recs[1].Offset >= got || recs[0].Offset != int64(len(before)) {
		t.Errorf("offsets %d, %d in a file of %d bytes", recs[0].Offset, recs[1].Offset, got)
	}
	l.Close()
	rep, err := ledger.Verify(dir, ledger.Options{})
	if err != nil || rep.HeadSeq != 3 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
