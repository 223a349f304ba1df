package ledger_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
)

// benchBody makes a record line of about 300 bytes, like the measurements in durability.md.
var benchBody = map[string]string{"tool": "read", "path": "internal/ledger/ledger.go", "text": strings.Repeat("x", 120)}

func benchAppend(b *testing.B, noSync bool) {
	l, err := ledger.Create(b.TempDir(), header(), ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(ledger.Entry{Kind: "intent", Body: benchBody, NoSync: noSync}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkAppendSync: every append fsynced (intents and results).
func BenchmarkAppendSync(b *testing.B) { benchAppend(b, false) }

// BenchmarkAppendNoSync: bookkeeping appends, written but not fsynced.
func BenchmarkAppendNoSync(b *testing.B) { benchAppend(b, true) }

// BenchmarkOpenVerify100k: Open (lock, verify every line) of a 100,000-record ledger.
func BenchmarkOpenVerify100k(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "l")
	l, err := ledger.Create(dir, header(), ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for range 100_000 - 1 {
		if _, err := l.Append(ledger.Entry{Kind: "entry", Body: benchBody, NoSync: true}); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		l, rep, err := ledger.Open(dir, ledger.Options{})
		if err != nil || rep.HeadSeq != 100_000 {
			b.Fatal(rep, err)
		}
		l.Close()
	}
}
