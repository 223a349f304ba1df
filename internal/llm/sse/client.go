package sse

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/llm/watchdog"
)

// userAgent names rein to the server.
const userAgent = "rein"

// maxErrorBody caps how much of an error answer is read.
const maxErrorBody = 64 << 10

// defaultHTTPClient has no overall timeout: a stream lasts as long as the model writes.
var defaultHTTPClient = &http.Client{}

// Client posts streaming requests to one API root. Safe for concurrent use; one per model, so
// that its connections are kept alive from one request to the next.
type Client struct {
	base   *url.URL // ends with "/"
	header http.Header
	hc     *http.Client
}

// NewClient returns a client talking to baseURL that sends header (credentials, API version)
// with every request; the client keeps header and it must not change afterwards. A nil hc
// uses a shared client without timeout. The base URL must be absolute (http or https).
func NewClient(baseURL string, header http.Header, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid base URL %q: want an absolute http or https URL", baseURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	if hc == nil {
		hc = defaultHTTPClient
	}
	return &Client{base: u, header: header, hc: hc}, nil
}

// URL returns the address of path (relative, for example "chat/completions") under the base.
func (c *Client) URL(path string) string {
	return c.base.ResolveReference(&url.URL{Path: path}).String()
}

// Post sends a JSON body of n bytes, read from the readers getBody returns (net/http asks for
// a second one when it resends a request on a fresh connection), to path under the watch of
// x, and returns the response of a status below 400; its body must be closed. An error is the
// transport's, x's, or an [*HTTPError].
func (c *Client) Post(ctx context.Context, path string, n int64, getBody func() (io.ReadCloser, error), x *watchdog.Exchange) (*http.Response, error) {
	body, err := getBody()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(path), body)
	if err != nil {
		_ = body.Close()
		return nil, err
	}
	req.ContentLength = n
	req.GetBody = getBody
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("User-Agent", userAgent)
	for k, vs := range c.header {
		h[k] = vs
	}
	res, err := x.Middleware(req, c.hc.Do)
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 400 {
		res.Body = drainBody{res.Body}
		return res, nil
	}
	b, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_ = res.Body.Close()
	if rerr != nil && len(b) == 0 {
		return nil, rerr
	}
	return nil, &HTTPError{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

// HTTPError is an HTTP answer with status >= 400.
type HTTPError struct {
	Status int
	Header http.Header
	Body   string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

// Bounds of drainBody.Close.
const (
	drainLimit = 16 << 10
	drainWait  = 20 * time.Millisecond
)

// drainBody lets the connection of a finished stream be reused. The adapters stop reading at
// the "[DONE]" event or the terminal event and close the body before its end (the chunked
// terminator follows), which would make net/http drop the connection: the next request would
// dial again (and, for a real API, shake hands again). Close reads what is left first, at most
// drainLimit bytes for at most drainWait (a stream closed early, on an error, is not read to
// its end).
type drainBody struct{ io.ReadCloser }

func (b drainBody) Close() error {
	t := time.AfterFunc(drainWait, func() { _ = b.ReadCloser.Close() })
	_, _ = io.CopyN(io.Discard, b.ReadCloser, drainLimit)
	t.Stop()
	return b.ReadCloser.Close()
}
