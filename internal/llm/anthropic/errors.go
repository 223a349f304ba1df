package anthropic

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reinhq/rein/internal/llm"
)

// maxErrorText bounds the provider text kept in an error message.
const maxErrorText = 4000

// transport records whether the request or its response body failed at the transport level,
// which tells a cut connection from a stream rein could not decode.
type transport struct {
	err error
}

// middleware watches one request: a failed round trip and a failed body read are transport
// errors.
func (t *transport) middleware() option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil {
			t.err = err
		}
		if res != nil && res.Body != nil {
			res.Body = &watchedBody{ReadCloser: res.Body, t: t}
		}
		return res, err
	})
}

type watchedBody struct {
	io.ReadCloser
	t *transport
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.t.err == nil {
		b.t.err = err
	}
	return n, err
}

// classify maps an error of the SDK's stream to a typed failure.
func (t *transport) classify(ctx context.Context, err error) *llm.Error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return llm.TransportError(ctx, err)
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		if apiErr.StatusCode >= 400 {
			return llm.StatusError(apiErr.StatusCode, errorText(apiErr), retryAfter(apiErr.Response))
		}
		return eventError(apiErr)
	}
	if t.err != nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return llm.TransportError(ctx, err)
	}
	return &llm.Error{Kind: llm.KindProtocol, Message: "could not decode the response stream: " + err.Error()}
}

// eventStatus is the HTTP status the API uses for each error type, which classifies an error
// that arrives as a mid-stream error event.
var eventStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// eventError classifies a mid-stream error event. Unknown types count as server errors,
// which are retryable.
func eventError(e *sdk.Error) *llm.Error {
	status, ok := eventStatus[string(e.Type())]
	if !ok {
		status = 500
	}
	text := errorText(e)
	if text == "" {
		text = "error event without details"
	}
	le := llm.StatusError(status, text, 0)
	le.Status = 0 // the HTTP status was 200; the error came inside the stream
	return le
}

// errorText is "type: message" from an API error body, or the raw body when it is not the
// API's JSON error shape.
func errorText(e *sdk.Error) string {
	var text string
	if e.Type() != "" && e.Message != "" {
		text = string(e.Type()) + ": " + e.Message
	} else {
		text = strings.TrimSpace(e.RawJSON())
	}
	if len(text) > maxErrorText {
		text = text[:maxErrorText] + "…"
	}
	return text
}

// retryAfter reads retry-after-ms (milliseconds) or retry-after (seconds or an HTTP date).
func retryAfter(res *http.Response) time.Duration {
	if res == nil {
		return 0
	}
	if v := res.Header.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := res.Header.Get("retry-after")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := time.Until(at); d > 0 {
			return d
		}
	}
	return 0
}

// redact removes the API key from e's message, should a server or transport error echo it.
func (m *model) redact(e *llm.Error) *llm.Error {
	if m.cfg.APIKey != "" {
		e.Message = strings.ReplaceAll(e.Message, m.cfg.APIKey, "[redacted]")
	}
	return e
}
