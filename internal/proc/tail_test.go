package proc

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestTailKeepsTheLastBytes(t *testing.T) {
	tl := NewTail(10)
	var all bytes.Buffer
	for i := range 100 {
		chunk := []byte(strings.Repeat(string(rune('a'+i%26)), i%7+1))
		tl.Write(chunk)
		all.Write(chunk)
		if n := len(tl.buf); n > 2*10 {
			t.Fatalf("after %d writes the buffer holds %d bytes, more than twice the limit", i+1, n)
		}
		want := all.Bytes()
		if len(want) > 10 {
			want = want[len(want)-10:]
		}
		if got := tl.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("after %d writes Bytes = %q, want %q", i+1, got, want)
		}
		if tl.Total() != int64(all.Len()) || tl.Truncated() != (all.Len() > 10) {
			t.Fatalf("Total = %d, Truncated = %v for %d bytes", tl.Total(), tl.Truncated(), all.Len())
		}
	}
}

func TestTailLargeWrite(t *testing.T) {
	tl := NewTail(4)
	tl.Write([]byte("ab"))
	big := []byte(strings.Repeat("x", 1<<20) + "wxyz")
	if n, err := tl.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if string(tl.Bytes()) != "wxyz" || tl.Total() != int64(len(big)+2) || cap(tl.buf) > 1<<10 {
		t.Errorf("Bytes = %q, Total = %d, cap = %d", tl.Bytes(), tl.Total(), cap(tl.buf))
	}
	b := tl.Bytes()
	b[0] = 'Q'
	if tl.Bytes()[0] != 'w' {
		t.Error("changing the result of Bytes changed the tail")
	}
}

func TestTailShortAndZero(t *testing.T) {
	tl := NewTail(100)
	tl.Write([]byte("short"))
	if string(tl.Bytes()) != "short" || tl.Truncated() {
		t.Errorf("Bytes = %q, Truncated = %v", tl.Bytes(), tl.Truncated())
	}
	none := NewTail(0)
	none.Write([]byte("abc"))
	if len(none.Bytes()) != 0 || none.Total() != 3 || !none.Truncated() {
		t.Errorf("limit 0: Bytes = %q, Total = %d", none.Bytes(), none.Total())
	}
}

func TestTailConcurrentWrites(t *testing.T) {
	tl := NewTail(64)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				tl.Write([]byte("0123456789"))
			}
		})
	}
	wg.Wait()
	if tl.Total() != 80000 || len(tl.Bytes()) != 64 {
		t.Errorf("Total = %d, kept %d", tl.Total(), len(tl.Bytes()))
	}
}
