package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// stdioTransport speaks the stdio transport: one JSON-RPC message per line, newline
// delimited, on the server's standard input and output.
type stdioTransport struct {
	w io.WriteCloser

	wmu  sync.Mutex // one message written at a time
	in   chan inbound
	quit chan struct{} // closed by close: nobody reads in any more

	closeOnce sync.Once
	closeErr  error
	closers   []io.Closer
}

// newStdioTransport reads messages from r and writes them to w; closing it closes w (the
// server's input, which asks it to end) and r.
func newStdioTransport(r io.ReadCloser, w io.WriteCloser) *stdioTransport {
	t := &stdioTransport{w: w, in: make(chan inbound, 16), quit: make(chan struct{}), closers: []io.Closer{w, r}}
	go t.readLines(r)
	return t
}

func (t *stdioTransport) readLines(r io.Reader) {
	defer close(t.in)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxMessage)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if in := parsed(line); !t.put(in) || in.err != nil {
			return // closed, or the session ends on what could not be parsed
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		t.put(inbound{err: fmt.Errorf("%w: a line longer than %d MiB on its standard output", errMalformed, maxMessage>>20)})
	case err != nil && !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, os.ErrClosed):
		t.put(inbound{err: fmt.Errorf("reading its standard output: %w", err)})
	}
}

// put hands one inbound to the session, unless the transport was closed.
func (t *stdioTransport) put(in inbound) bool {
	select {
	case t.in <- in:
		return true
	case <-t.quit:
		return false
	}
}

// send writes one line; it gives up when ctx ends first (a server that stops reading its
// input would otherwise hold the call past its time limit). The write goes on until it
// completes or close ends it: lines are never interleaved.
func (t *stdioTransport) send(ctx context.Context, msg []byte, _ int64) error {
	done := make(chan error, 1)
	go func() {
		t.wmu.Lock()
		defer t.wmu.Unlock()
		_, err := t.w.Write(append(msg, '\n'))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("writing to its standard input: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("writing to its standard input: %w", ctx.Err())
	}
}

func (t *stdioTransport) inbox() <-chan inbound { return t.in }

func (t *stdioTransport) negotiated(string) {}

func (t *stdioTransport) close() error {
	t.closeOnce.Do(func() {
		close(t.quit)
		for _, c := range t.closers {
			if err := c.Close(); err != nil && t.closeErr == nil && !errors.Is(err, io.ErrClosedPipe) {
				t.closeErr = err
			}
		}
	})
	return t.closeErr
}
