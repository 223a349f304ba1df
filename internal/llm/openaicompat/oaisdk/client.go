// Package oaisdk is the plumbing shared by rein's adapters built on the official openai-go SDK
// (packages openai and openaicompat): client options, error classification, usage
// normalisation, and the [Assembler] that turns decoded stream events into llm events and the
// final message.
//
// Guarantees:
//
//   - [Options] never reads the environment (no OPENAI_API_KEY, OPENAI_BASE_URL, …: the SDK's
//     NewClient does, so the adapters build their services from these options directly), sends
//     no Authorization header when the key is empty, and disables the SDK's own retries:
//     retrying is [llm.Retry]'s job.
//   - Every HTTP answer with status >= 400 is turned into an [*HTTPError] before the SDK sees it,
//     so any body (JSON or not) and the retry-after headers reach [Classify].
//   - [Classify] and [StreamFailure] never return a message containing the API key.
package oaisdk

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// maxErrorBody caps how much of an error answer is read.
const maxErrorBody = 64 << 10

// defaultHTTPClient has no overall timeout: a stream lasts as long as the model writes.
var defaultHTTPClient = &http.Client{}

// Options returns the SDK request options for a service talking to baseURL with apiKey. An
// empty apiKey sends no Authorization header (keyless local servers); a nil hc uses a shared
// client without timeout. The base URL must be absolute (http or https).
func Options(baseURL, apiKey string, hc *http.Client) ([]option.RequestOption, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid base URL %q: want an absolute http or https URL", baseURL)
	}
	if hc == nil {
		hc = defaultHTTPClient
	}
	opts := []option.RequestOption{
		option.WithBaseURL(baseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(statusMiddleware),
	}
	if apiKey != "" {
		opts = append(opts, option.WithAPIKey(apiKey))
	}
	return opts, nil
}

// HTTPError is an HTTP answer with status >= 400.
type HTTPError struct {
	Status int
	Header http.Header
	Body   string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

// statusMiddleware turns error statuses into *HTTPError, so that the SDK returns them as they
// are instead of decoding (and possibly failing on) the body.
func statusMiddleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil {
		return res, err
	}
	if res.StatusCode < 400 {
		res.Body = drainBody{res.Body}
		return res, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_ = res.Body.Close()
	if rerr != nil && len(body) == 0 {
		return nil, rerr
	}
	return nil, &HTTPError{Status: res.StatusCode, Header: res.Header, Body: string(body)}
}

// Bounds of drainBody.Close.
const (
	drainLimit = 16 << 10
	drainWait  = 20 * time.Millisecond
)

// drainBody lets the connection of a finished stream be reused. The SDK stops reading at the
// "[DONE]" event and closes the body before its end (the chunked terminator follows), which
// makes net/http drop the connection: the next request then dials again (and, for a real API,
// shakes hands again). Close reads what is left first, at most drainLimit bytes for at most
// drainWait (a stream closed early, on an error, is not read to its end).
type drainBody struct{ io.ReadCloser }

func (b drainBody) Close() error {
	t := time.AfterFunc(drainWait, func() { _ = b.ReadCloser.Close() })
	_, _ = io.CopyN(io.Discard, b.ReadCloser, drainLimit)
	t.Stop()
	return b.ReadCloser.Close()
}

// redact removes key from s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
