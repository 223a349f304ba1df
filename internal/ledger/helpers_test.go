package ledger_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

var long = flag.Bool("ledger.long", false, "run the long crash, fault and tamper matrices")

// memDir is where MemFS-based tests keep their ledger.
const memDir = "/home/sessions/s1"

var memPath = filepath.Join(memDir, ledger.FileName)

// testOptions gives deterministic timestamps and ids unique to this Options value.
func testOptions(fsys ledger.FS, idPrefix string) ledger.Options {
	var clock, ids atomic.Int64
	return ledger.Options{
		FS: fsys,
		Now: func() time.Time {
			return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(clock.Add(1)) * time.Millisecond)
		},
		NewID: func() string { return fmt.Sprintf("%s%d", idPrefix, ids.Add(1)) },
	}
}

func header() ledger.Header { return ledger.Header{Type: ledger.TypeSession, ID: "s1"} }

// acked remembers the h of every record whose Append returned, and which seqs are durable.
type acked struct {
	h       map[int64]string
	durable int64 // every seq ≤ durable was fsynced
}

func newAcked() *acked { return &acked{h: map[int64]string{}} }

func (a *acked) add(r ledger.Record, synced bool) {
	a.h[r.Seq] = r.H
	if synced {
		a.durable = r.Seq
	}
}

// check verifies that every durable record is present with its hash.
func (a *acked) check(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	for seq := int64(1); seq <= a.durable; seq++ {
		if err := l.CheckAnchor(seq, a.h[seq]); err != nil {
			t.Fatalf("acknowledged record lost: %v", err)
		}
	}
}

// fixture builds a ledger on a fresh MemFS: header plus n synced entries. It returns the file
// bytes and each record.
func fixture(t testing.TB, n int) ([]byte, []ledger.Record) {
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
	parent := "s1"
	for i := range n {
		r, err := l.Append(ledger.Entry{Kind: "entry", Parent: parent, Body: map[string]any{"n": i, "text": "hello world"}})
		if err != nil {
			t.Fatal(err)
		}
		parent = r.ID
		recs = append(recs, r)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := m.ReadFile(memPath)
	return data, recs
}

// openBytes opens a ledger whose file holds data, on a fresh MemFS.
func openBytes(data []byte) (*ledgertest.MemFS, *ledger.Ledger, *ledger.Report, error) {
	m := ledgertest.NewMemFS()
	m.MkdirAll(memDir)
	if err := m.WriteFile(memPath, data); err != nil {
		panic(err)
	}
	l, rep, err := ledger.Open(memDir, testOptions(m, "o"))
	return m, l, rep, err
}

// wantCorrupt asserts err is a *CorruptError at offset and seq.
func wantCorrupt(t *testing.T, err error, offset, seq int64) {
	t.Helper()
	var ce *ledger.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ledger.ErrCorrupt) {
		t.Fatalf("want a CorruptError at offset %d seq %d, got %v", offset, seq, err)
	}
	if ce.Offset != offset || ce.Seq != seq {
		t.Fatalf("corruption at offset %d seq %d, want offset %d seq %d: %v", ce.Offset, ce.Seq, offset, seq, err)
	}
}

// lines splits a ledger file into its lines, newline included.
func lines(data []byte) [][]byte {
	ls := bytes.SplitAfter(data, []byte("\n"))
	if len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func join(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
