package artifact_test

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

// TestSumFileEqualsSum: the streaming digest of a file equals the digest of its bytes read
// whole (the old way), for an empty file, a small one and one larger than io.Copy's buffer.
func TestSumFileEqualsSum(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 32<<10 - 1, 32 << 10, 3<<20 + 7} {
		data := make([]byte, size)
		if _, err := rand.Read(data); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := artifact.SumFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := artifact.Sum(data); got != want || !got.Valid() {
			t.Errorf("size %d: SumFile = %s, Sum = %s", size, got, want)
		}
	}
	if _, err := artifact.SumFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// BenchmarkSumFileExecutable hashes the running test binary the way rein run hashes itself;
// B/op stays a few KiB whatever the binary's size (reading it whole would be its size).
func BenchmarkSumFileExecutable(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(exe)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := artifact.SumFile(exe); err != nil {
			b.Fatal(err)
		}
	}
}
