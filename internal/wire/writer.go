package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// Writer writes one JSON value per line ("\n"-terminated, HTML characters unescaped), each line
// with a single Write call. It is safe for concurrent use; after the first error it writes
// nothing more and returns that error.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
	err error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes v as one line.
func (w *Writer) Write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err // a value that cannot be encoded is the caller's bug, not the stream's
	}
	_, w.err = w.w.Write(w.buf.Bytes())
	return w.err
}

// Err returns the first write error.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
