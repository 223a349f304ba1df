package anthropic

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/sse"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// maxErrorText bounds the provider text kept in an error message.
const maxErrorText = 4000

// classify maps an error of the request or of reading its stream to a typed failure. x
// watched the request: a watchdog timeout is a retryable timeout or incomplete stream, a
// transport failure after the response headers an incomplete stream, one before them a
// network error.
func classify(ctx context.Context, x *watchdog.Exchange, err error) *llm.Error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return llm.TransportError(ctx, err)
	}
	var wd *watchdog.Error
	if errors.As(err, &wd) {
		return wd.LLM()
	}
	var httpErr *sse.HTTPError
	if errors.As(err, &httpErr) {
		p := providerError([]byte(httpErr.Body))
		p.Status, p.RetryAfter = httpErr.Status, retryAfter(httpErr.Header)
		return p.Classify()
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return &llm.Error{Kind: llm.KindProtocol, Message: "could not decode the response stream: " + err.Error()}
	}
	if x.Responded() {
		return llm.IncompleteStream(ctx, "the connection failed mid-stream: "+err.Error())
	}
	return llm.TransportError(ctx, err)
}

// errorBody is the API's error shape, as an HTTP answer and as an error event:
// {"type":"error","error":{"type":…,"message":…,"details":{"error_code":…}}}.
type errorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Details *struct {
			ErrorCode string `json:"error_code"`
		} `json:"details"`
	} `json:"error"`
}

// providerError reads the structured fields of an API error: error.type and
// error.details.error_code, which classify it before its message does. The message is
// "type: message", or the raw body when it is not the API's JSON error shape.
func providerError(body []byte) llm.ProviderError {
	var b errorBody
	if json.Unmarshal(body, &b) != nil {
		b = errorBody{}
	}
	p := llm.ProviderError{Type: b.Error.Type}
	if b.Error.Details != nil {
		p.Code = b.Error.Details.ErrorCode
	}
	if b.Error.Type != "" && b.Error.Message != "" {
		p.Message = b.Error.Type + ": " + b.Error.Message
	} else {
		p.Message = strings.TrimSpace(string(body))
	}
	if len(p.Message) > maxErrorText {
		p.Message = p.Message[:maxErrorText] + "…"
	}
	return p
}

// eventError classifies a mid-stream error event by its type (and code), as the API would
// answer it over HTTP; Status is 0, as the HTTP status was 200. An event of unknown type with
// no recognisable text is a retryable server error.
func eventError(data []byte) *llm.Error {
	p := providerError(data)
	if p.Message == "" {
		p.Message = "error event without details"
	}
	return p.Classify()
}

// retryAfter reads retry-after-ms (milliseconds) or retry-after (seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("retry-after")
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
