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

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// maxErrorText bounds the provider text kept in an error message.
const maxErrorText = 4000

// classify maps an error of the SDK's stream to a typed failure. x watched the request: a
// watchdog timeout is a retryable timeout or incomplete stream, a transport failure after the
// response headers an incomplete stream, one before them a network error.
func classify(ctx context.Context, x *watchdog.Exchange, err error) *llm.Error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return llm.TransportError(ctx, err)
	}
	var wd *watchdog.Error
	if errors.As(err, &wd) {
		return wd.LLM()
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		if apiErr.StatusCode >= 400 {
			return providerError(apiErr, apiErr.StatusCode, retryAfter(apiErr.Response)).Classify()
		}
		return eventError(apiErr)
	}
	if x.Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		if x.Responded() {
			return llm.IncompleteStream(ctx, "the connection failed mid-stream: "+err.Error())
		}
		return llm.TransportError(ctx, err)
	}
	return &llm.Error{Kind: llm.KindProtocol, Message: "could not decode the response stream: " + err.Error()}
}

// providerError reads the structured fields of an API error: error.type and
// error.details.error_code, which classify it before its message does.
func providerError(e *sdk.Error, status int, wait time.Duration) llm.ProviderError {
	return llm.ProviderError{Status: status, Type: string(e.Type()), Code: string(e.ErrorCode()),
		Message: errorText(e), RetryAfter: wait}
}

// eventError classifies a mid-stream error event by its type (and code), as the API would
// answer it over HTTP; Status is 0, as the HTTP status was 200. An event of unknown type with
// no recognisable text is a retryable server error.
func eventError(e *sdk.Error) *llm.Error {
	p := providerError(e, 0, 0)
	if p.Message == "" {
		p.Message = "error event without details"
	}
	return p.Classify()
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
