package watchdog

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/llm"
)

// Defaults of [Limits].
const (
	DefaultHeader = 120 * time.Second
	DefaultIdle   = 120 * time.Second
)

// Limits bound the silences of one exchange. A zero (or negative) field means its default.
type Limits struct {
	// Header is the longest wait from sending the request to its response headers.
	Header time.Duration
	// Idle is the longest wait for the next byte of the response body.
	Idle time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.Header <= 0 {
		l.Header = DefaultHeader
	}
	if l.Idle <= 0 {
		l.Idle = DefaultIdle
	}
	return l
}

// Phases of an [Error].
const (
	PhaseHeaders = "headers"
	PhaseBody    = "body"
)

// Error says a limit passed and the request was abandoned.
type Error struct {
	Phase string
	Limit time.Duration
}

func (e *Error) Error() string {
	if e.Phase == PhaseHeaders {
		return fmt.Sprintf("no response headers within %s of sending the request (header timeout)", e.Limit)
	}
	return fmt.Sprintf("no data for %s (stream idle timeout, --stream-idle-timeout)", e.Limit)
}

// LLM returns the typed model failure: a retryable timeout for the headers, a retryable
// incomplete stream for the body.
func (e *Error) LLM() *llm.Error {
	if e.Phase == PhaseHeaders {
		return &llm.Error{Kind: llm.KindTimeout, Retryable: true, Message: e.Error()}
	}
	return llm.IncompleteStream(context.Background(), e.Error())
}

// Exchange watches one request. Use a new one per request; its methods are safe for
// concurrent use.
type Exchange struct {
	limits Limits

	mu        sync.Mutex
	timer     *time.Timer
	cancel    context.CancelCauseFunc
	phase     string
	responded bool
	closed    bool
	hit       *Error
	err       error
}

// New returns an Exchange under l.
func New(l Limits) *Exchange { return &Exchange{limits: l.withDefaults()} }

// Middleware sends req through next under the header timeout and returns the response with
// its body under the idle timeout. Its signature is the SDKs' option.Middleware.
func (x *Exchange) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	x.mu.Lock()
	x.cancel, x.phase = cancel, PhaseHeaders
	x.timer = time.AfterFunc(x.limits.Header, x.fire)
	x.mu.Unlock()

	res, err := next(req.WithContext(ctx))

	x.mu.Lock()
	defer x.mu.Unlock()
	x.timer.Stop()
	if err != nil || res == nil || res.Body == nil {
		if x.hit != nil {
			err = x.hit
		}
		if err != nil && x.err == nil {
			x.err = err
		}
		x.closed = true
		cancel(nil)
		return res, err
	}
	x.responded = true
	x.phase = PhaseBody
	if x.hit == nil {
		x.timer.Reset(x.limits.Idle)
	}
	res.Body = &body{ReadCloser: res.Body, x: x}
	return res, nil
}

// fire runs when a limit passes: it abandons the request.
func (x *Exchange) fire() {
	x.mu.Lock()
	if x.closed || x.hit != nil {
		x.mu.Unlock()
		return
	}
	limit := x.limits.Header
	if x.phase == PhaseBody {
		limit = x.limits.Idle
	}
	x.hit = &Error{Phase: x.phase, Limit: limit}
	cancel, hit := x.cancel, x.hit
	x.mu.Unlock()
	cancel(hit)
}

// Responded reports whether the response headers arrived.
func (x *Exchange) Responded() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.responded
}

// Err returns the first transport error of the exchange (the round trip's, or a body read's
// other than io.EOF), or nil.
func (x *Exchange) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// read accounts for one body read and returns the error the reader should see.
func (x *Exchange) read(n int, err error) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case err == io.EOF:
		x.timer.Stop()
		return err
	case err != nil:
		if x.hit != nil {
			err = x.hit
		}
		if x.err == nil {
			x.err = err
		}
		return err
	case n > 0 && x.hit == nil && !x.closed:
		x.timer.Reset(x.limits.Idle)
	}
	return nil
}

func (x *Exchange) close() {
	x.mu.Lock()
	x.closed = true
	x.timer.Stop()
	cancel := x.cancel
	x.mu.Unlock()
	cancel(nil)
}

// body is a response body under the idle timeout.
type body struct {
	io.ReadCloser
	x *Exchange
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	return n, b.x.read(n, err)
}

// Close closes the body first (so a drained connection is reused), then releases the
// request's context.
func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.x.close()
	return err
}
