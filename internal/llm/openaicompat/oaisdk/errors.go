package oaisdk

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/sse"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// EventError is an error object the server sent as an event of a 200 stream (an event whose
// JSON has a non-null top-level "error"); Data is the event's data.
type EventError struct{ Data []byte }

func (e *EventError) Error() string {
	return "the server sent an error in the stream: " + ErrorText(string(e.Data))
}

// HasError reports whether raw, the value of an event's top-level "error" field, says the
// server failed: present and not null.
func HasError(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// Classify turns an error met when opening the request or while reading the stream into an [*llm.Error]. ctx is the caller's context (cancellation means abort);
// apiKey is removed from the message.
func Classify(ctx context.Context, err error, apiKey string) *llm.Error {
	var e *llm.Error
	var httpErr *sse.HTTPError
	var streamErr *EventError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var wd *watchdog.Error
	switch {
	case ctx.Err() != nil:
		e = llm.TransportError(ctx, ctx.Err())
	case errors.As(err, &wd):
		e = wd.LLM()
	case errors.As(err, &httpErr):
		e = httpFailure(httpErr.Status, httpErr.Body, httpErr.Header)
	case errors.As(err, &streamErr):
		e = streamFailureJSON(streamErr.Data)
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr), errors.Is(err, bufio.ErrTooLong):
		e = &llm.Error{Kind: llm.KindProtocol, Message: "malformed stream: " + err.Error()}
	default:
		e = llm.TransportError(ctx, err)
	}
	return Redact(e, apiKey)
}

// StreamError is [Classify] for the failure of a request x watched: a transport failure after
// the response headers arrived is a retryable incomplete stream, not a network error.
func StreamError(ctx context.Context, x *watchdog.Exchange, err error, apiKey string) *llm.Error {
	e := Classify(ctx, err, apiKey)
	if e.Kind == llm.KindNetwork && x.Responded() {
		e = Redact(llm.IncompleteStream(ctx, "the connection failed mid-stream: "+e.Message), apiKey)
	}
	return e
}

// Redact removes apiKey from e's message and returns e.
func Redact(e *llm.Error, apiKey string) *llm.Error {
	e.Message = redact(e.Message, apiKey)
	return e
}

// errorBody is the error object OpenAI and most compatible servers send, either at the top level
// or under "error"; some servers send "error" as a plain string.
type errorBody struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // string, number or null
	Error   json.RawMessage `json:"error"`
}

func (b *errorBody) code() string { return Code(b.Code) }

// Code returns an error code sent as a string, a number or null: the string, the number's
// text, or "".
func Code(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) > 0 && string(raw) != "null" {
		return string(raw)
	}
	return ""
}

// parseError reads an error object from JSON text: {"error":{...}}, {"error":"..."} or {...}.
func parseError(text string) (message, typ, code string, ok bool) {
	var b errorBody
	if json.Unmarshal([]byte(text), &b) != nil {
		return "", "", "", false
	}
	if len(b.Error) > 0 && string(b.Error) != "null" {
		var s string
		if json.Unmarshal(b.Error, &s) == nil {
			return s, "", "", s != ""
		}
		var inner errorBody
		if json.Unmarshal(b.Error, &inner) == nil {
			return inner.Message, inner.Type, inner.code(), inner.Message != "" || inner.Type != "" || inner.code() != ""
		}
	}
	return b.Message, b.Type, b.code(), b.Message != "" || b.Type != "" || b.code() != ""
}

// httpFailure classifies an HTTP error answer from its status and the error object's type and
// code ([llm.ProviderError]); the message is [ErrorText].
func httpFailure(status int, body string, h http.Header) *llm.Error {
	_, typ, code, _ := parseError(body)
	return llm.ProviderError{Status: status, Type: typ, Code: code, Message: ErrorText(body), RetryAfter: RetryAfter(h)}.Classify()
}

// ErrorText returns the readable part of an error body: the error message followed by its type
// and code, or the trimmed body itself when it is not a known shape.
func ErrorText(body string) string {
	msg, typ, code, ok := parseError(body)
	if !ok {
		body = strings.TrimSpace(body)
		if len(body) > 2000 {
			body = body[:2000] + "…"
		}
		return body
	}
	return withDetails(msg, typ, code)
}

func withDetails(msg, typ, code string) string {
	var details []string
	for _, d := range []string{typ, code} {
		if d != "" && !strings.Contains(msg, d) && !slices.Contains(details, d) {
			details = append(details, d)
		}
	}
	if len(details) == 0 {
		return msg
	}
	if msg == "" {
		return strings.Join(details, ", ")
	}
	return msg + " (" + strings.Join(details, ", ") + ")"
}

// streamFailureJSON classifies an error object found in a stream event.
func streamFailureJSON(data []byte) *llm.Error {
	msg, typ, code, ok := parseError(string(data))
	if !ok {
		msg = strings.TrimSpace(string(data))
	}
	return StreamFailure(code, typ, msg)
}

// StreamFailure classifies an error the server reported inside a 200 stream (an error event or
// object, a failed response) from its code and type first, and from its message only when
// they say nothing known ([llm.ProviderError] with Status 0). Overload, rate-limit and server
// errors are retryable; quota, context-overflow and invalid-request errors are not. An error
// that says nothing recognisable is treated as a retryable server error: the request itself
// was accepted, so the failure is the server's.
func StreamFailure(code, typ, message string) *llm.Error {
	return llm.ProviderError{Type: typ, Code: code, Message: withDetails(message, typ, code)}.Classify()
}

// RetryAfter returns the wait a server asked for: retry-after-ms (milliseconds) or retry-after
// (seconds, or an HTTP date), or 0.
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && !math.IsInf(ms, 0) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && !math.IsInf(s, 0) && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
