package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/llm/sse"
)

// Streamable HTTP headers.
const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "MCP-Protocol-Version"
	headerLastID   = "Last-Event-ID"
)

// maxRetries is how often a cut answer stream is resumed (GET with Last-Event-ID) without
// progress before the request fails.
const maxRetries = 1

// maxErrorBody bounds the part of an error answer kept for the message.
const maxErrorBody = 4 << 10

// errSessionGone is the cause of a session the server ended (404 for its session id).
var errSessionGone = errors.New("the server ended the session (HTTP 404 for its session id)")

// httpTransport speaks the Streamable HTTP transport: every message is POSTed to the
// endpoint; the answer to a request is a JSON body or an event stream that carries it (and
// whatever the server sends meanwhile). No standalone GET stream is opened.
type httpTransport struct {
	url    string
	client *http.Client

	mu      sync.Mutex
	session string // Mcp-Session-Id, once the server gave one
	version string // the negotiated protocol version, once initialize answered

	in        chan inbound  // never closed: the session stops reading when it closes
	quit      chan struct{} // closed by close: nobody reads in any more
	closeOnce sync.Once
}

func newHTTPTransport(url string, client *http.Client) *httpTransport {
	return &httpTransport{url: url, client: client, in: make(chan inbound, 16), quit: make(chan struct{})}
}

func (t *httpTransport) inbox() <-chan inbound { return t.in }

func (t *httpTransport) negotiated(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

// put hands one inbound to the session, unless the transport was closed.
func (t *httpTransport) put(in inbound) bool {
	select {
	case t.in <- in:
		return true
	case <-t.quit:
		return false
	}
}

// fail ends the connection with err.
func (t *httpTransport) fail(err error) { t.put(inbound{err: err}) }

// send POSTs one message. A request's answer is read in the background (the call's ctx
// bounds it); a notification or a response is answered 202 Accepted.
func (t *httpTransport) send(ctx context.Context, msg []byte, id int64) error {
	resp, err := t.do(ctx, http.MethodPost, msg, "")
	if err != nil {
		return err
	}
	if err := t.check(resp); err != nil {
		return err
	}
	if id == 0 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage+1))
		resp.Body.Close()
		switch {
		case err != nil:
			return fmt.Errorf("reading the answer: %w", err)
		case len(body) > maxMessage:
			err := fmt.Errorf("%w: an answer longer than %d MiB", errMalformed, maxMessage>>20)
			t.fail(err)
			return err
		}
		t.put(parsed(body))
	case "text/event-stream":
		go t.stream(ctx, resp, id)
	default:
		resp.Body.Close()
		return fmt.Errorf("%w: the answer's content type is %q, not application/json or text/event-stream", errMalformed, ct)
	}
	return nil
}

// do sends one HTTP request with the session's headers and records the session id.
func (t *httpTransport) do(ctx context.Context, method string, body []byte, lastID string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if lastID != "" {
		req.Header.Set(headerLastID, lastID)
	}
	t.mu.Lock()
	if t.session != "" {
		req.Header.Set(headerSession, t.session)
	}
	if t.version != "" {
		req.Header.Set(headerProtocol, t.version)
	}
	t.mu.Unlock()
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	if sid := resp.Header.Get(headerSession); sid != "" {
		t.mu.Lock()
		prev := t.session
		if prev == "" {
			t.session = sid
		}
		t.mu.Unlock()
		if prev != "" && prev != sid {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: the server changed the session id from %q to %q", errMalformed, prev, sid)
		}
	}
	return resp, nil
}

// check turns an unsuccessful answer into an error (closing its body): 404 for the session
// ends the connection; a JSON-RPC error in the body is the request's error.
func (t *httpTransport) check(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	t.mu.Lock()
	hadSession := t.session != ""
	t.mu.Unlock()
	if resp.StatusCode == http.StatusNotFound && hadSession {
		t.fail(errSessionGone)
		return errSessionGone
	}
	if msgs, err := parseMessages(body); err == nil && len(msgs) == 1 && msgs[0].Error != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, msgs[0].Error)
	}
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// stream reads an answer stream until the answer to request id has come, resuming a cut
// stream once (GET with Last-Event-ID) when the server numbered its events. A stream that
// ends without the answer fails the request.
func (t *httpTransport) stream(ctx context.Context, resp *http.Response, id int64) {
	var last string
	retries := 0
	for {
		got, lastID, err := t.events(resp, id)
		resp.Body.Close()
		if got || ctx.Err() != nil {
			return
		}
		if lastID != "" && lastID != last {
			last, retries = lastID, 0
		} else {
			retries++
		}
		if last == "" || retries > maxRetries {
			if err == nil {
				err = errors.New("the answer stream ended before the answer")
			}
			t.put(inbound{id: id, err: err})
			return
		}
		if resp, err = t.resume(ctx, last); err != nil {
			t.put(inbound{id: id, err: fmt.Errorf("resuming the answer stream: %w", err)})
			return
		}
	}
}

// resume reopens an answer stream after event lastID.
func (t *httpTransport) resume(ctx context.Context, lastID string) (*http.Response, error) {
	select {
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	resp, err := t.do(ctx, http.MethodGet, nil, lastID)
	if err != nil {
		return nil, err
	}
	if err := t.check(resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// events hands the messages of one event stream to the session, and says whether the
// answer to request id was among them and the last event id seen (got is also true when the
// stream ended the connection). An event longer than maxMessage ends the connection: nothing
// past the limit is buffered.
func (t *httpTransport) events(resp *http.Response, id int64) (got bool, lastID string, err error) {
	d := sse.NewDecoder(resp.Body)
	defer d.Release()
	for d.Next() {
		lastID = d.LastID()
		ev := d.Event()
		if len(ev.Data) > maxMessage {
			t.fail(fmt.Errorf("%w: an event longer than %d MiB", errMalformed, maxMessage>>20))
			return true, lastID, nil // the session ends on the failure
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 || (ev.Name != "" && ev.Name != "message") {
			continue
		}
		in := parsed(ev.Data) // keeps nothing of the decoder's buffer
		if !t.put(in) || in.err != nil || answers(in.msgs, id) {
			return true, lastID, nil // closed; the session ends on in.err
		}
	}
	// A stream cut inside an event drops it: its message may be incomplete, and its id does
	// not count.
	switch err := d.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		t.fail(fmt.Errorf("%w: %w", errMalformed, err))
		return true, d.LastID(), nil // the session ends on the failure
	case err != nil:
		return false, d.LastID(), err
	}
	return false, d.LastID(), nil
}

// answers reports whether msgs hold the response to request id.
func answers(msgs []*message, id int64) bool {
	want := strconv.FormatInt(id, 10)
	for _, m := range msgs {
		if m.Method == nil && string(m.ID) == want {
			return true
		}
	}
	return false
}

// close ends the session on the server (DELETE, best effort) and stops delivering messages.
func (t *httpTransport) close() error {
	t.closeOnce.Do(func() {
		close(t.quit)
		t.mu.Lock()
		sid := t.session
		t.mu.Unlock()
		if sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if resp, err := t.do(ctx, http.MethodDelete, nil, ""); err == nil {
				resp.Body.Close()
			}
		}
	})
	return nil
}
