package proc

import "sync"

// Tail is an [io.Writer] that keeps the last bytes written to it, up to a limit, and counts
// all of them: the output of a process that may print without end, in bounded memory (at
// most twice the limit, plus nothing of a single write beyond the limit). Writes never fail.
// It is safe for concurrent use.
type Tail struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	total int64
}

// NewTail returns a Tail keeping the last limit bytes; a limit ≤ 0 keeps nothing and only
// counts.
func NewTail(limit int) *Tail { return &Tail{limit: max(limit, 0)} }

// Write keeps the end of p and counts all of it.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.limit {
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.limit {
		// Compact only past twice the limit, so the copy is amortised over limit bytes.
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.limit:]...)
	}
	return len(p), nil
}

// Bytes returns a copy of the bytes kept: the last min(limit, Total) bytes written.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.buf
	if len(kept) > t.limit {
		kept = kept[len(kept)-t.limit:]
	}
	return append([]byte(nil), kept...)
}

// Total counts every byte written, kept or not.
func (t *Tail) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Truncated reports whether bytes were dropped: Total is more than the limit.
func (t *Tail) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(t.limit)
}
