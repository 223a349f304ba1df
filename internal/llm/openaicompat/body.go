package openaicompat

import (
	"io"
	"sync"
)

// bodyBuffer holds the buffer of the previous request's body, for the next one to encode
// into: what a body does not take from the message cache (the system prompt, the tools, the
// messages new to it) is tens of KB, and allocating it afresh every request was the largest
// source of garbage per turn. A buffer comes back only once the request is over and
// the transport has closed every reader of it, so a body is never overwritten while it is
// being sent. Safe for concurrent use (a request that finds no buffer allocates one).
type bodyBuffer struct {
	mu  sync.Mutex
	buf []byte
}

// get returns an empty buffer of at least n bytes' capacity: the previous one when it is free
// and large enough.
func (p *bodyBuffer) get(n int) []byte {
	p.mu.Lock()
	b := p.buf
	p.buf = nil
	p.mu.Unlock()
	if cap(b) < n {
		return make([]byte, 0, max(n, cap(b)+cap(b)/4))
	}
	return b[:0]
}

func (p *bodyBuffer) put(b []byte) {
	p.mu.Lock()
	if cap(b) > cap(p.buf) {
		p.buf = b
	}
	p.mu.Unlock()
}

// bodyLease sends one encoded body: its reader method hands the transport readers of the
// body's segments (the request's own buffer and runs of the message cache's bytes, which are
// never overwritten), and the buffer goes back to pool when the request is over (end) and
// every reader handed to the transport is closed. net/http closes a request body once it is
// done with it, on success and on every error.
type bodyLease struct {
	pool *bodyBuffer
	buf  []byte   // the request's own buffer, returned to pool
	segs [][]byte // the body, in order

	mu    sync.Mutex
	open  int  // readers handed out and not yet closed
	ended bool // the request is over: no more readers are handed out
}

func (l *bodyLease) reader() (io.ReadCloser, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return nil, io.ErrClosedPipe
	}
	l.open++
	return &leasedReader{segs: l.segs, lease: l}, nil
}

// end marks the request over; the buffer is released now or when the last reader closes.
func (l *bodyLease) end() {
	l.mu.Lock()
	l.ended = true
	free := l.open == 0
	l.mu.Unlock()
	if free {
		l.pool.put(l.buf)
	}
}

func (l *bodyLease) closed() {
	l.mu.Lock()
	l.open--
	free := l.ended && l.open == 0
	l.mu.Unlock()
	if free {
		l.pool.put(l.buf)
	}
}

// leasedReader reads a leased body's segments in order (the segments are shared with the
// lease's other readers and never modified); Close (once) returns it.
type leasedReader struct {
	segs   [][]byte
	i, off int // the next byte is segs[i][off]
	lease  *bodyLease
	once   sync.Once
}

func (r *leasedReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.i < len(r.segs) {
		k := copy(p[n:], r.segs[r.i][r.off:])
		n, r.off = n+k, r.off+k
		if r.off == len(r.segs[r.i]) {
			r.i, r.off = r.i+1, 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *leasedReader) Close() error {
	r.once.Do(r.lease.closed)
	return nil
}
