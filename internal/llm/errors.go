package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrorKind classifies a model failure.
type ErrorKind string

const (
	KindRateLimit   ErrorKind = "rate_limit"  // 429
	KindOverloaded  ErrorKind = "overloaded"  // 529, overloaded_error
	KindServer      ErrorKind = "server"      // 5xx
	KindNetwork     ErrorKind = "network"     // connection refused or reset before a response
	KindTimeout     ErrorKind = "timeout"     // no response headers within the header timeout
	KindAuth        ErrorKind = "auth"        // 401, 403
	KindInvalid     ErrorKind = "invalid"     // 400, 404, 422
	KindSpendLimit  ErrorKind = "spend_limit" // quota or billing exhausted
	KindContext     ErrorKind = "context"     // prompt longer than the context window
	KindProtocol    ErrorKind = "protocol"    // the response could not be understood
	KindAborted     ErrorKind = "aborted"     // the caller cancelled
	KindUnavailable ErrorKind = "unavailable" // no credentials or configuration to reach the model
	// KindIncompleteStream: the response began but did not reach its wire format's terminal
	// event (cut, ended early, or silent for longer than the idle timeout). Retryable; the
	// partial message is a failure, never an answer.
	KindIncompleteStream ErrorKind = "incomplete_stream"
)

// Error is a typed model failure. It never contains credentials.
type Error struct {
	Kind      ErrorKind `json:"kind"`
	Status    int       `json:"status,omitempty"`
	Message   string    `json:"message"`
	Retryable bool      `json:"retryable,omitempty"`
	// RetryAfterMs is the server's requested wait (retry-after), in milliseconds, or 0.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Kind, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// RetryAfter returns the server's requested wait.
func (e *Error) RetryAfter() time.Duration { return time.Duration(e.RetryAfterMs) * time.Millisecond }

// IsContextOverflow reports whether an error text says the prompt did not fit the window.
func IsContextOverflow(text string) bool {
	t := strings.ToLower(text)
	for _, s := range []string{"prompt is too long", "context window", "context length",
		"context_length_exceeded", "maximum context length", "too many tokens", "request_too_large"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// TransportError classifies an error that happened before a response arrived. ctx is the
// caller's context: if it was cancelled the result is an abort; every other transport failure
// (refused, reset) is a retryable network error.
func TransportError(ctx context.Context, err error) *Error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Kind: KindAborted, Message: "request aborted"}
	}
	return &Error{Kind: KindNetwork, Message: err.Error(), Retryable: true}
}

// IncompleteStream is the retryable failure of a response that began but did not reach its
// terminal event; why says how it ended. A cancelled ctx (the caller's) makes it an abort.
func IncompleteStream(ctx context.Context, why string) *Error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Kind: KindAborted, Message: "request aborted"}
	}
	return &Error{Kind: KindIncompleteStream, Retryable: true,
		Message: "the response stream is incomplete: " + why + "; the partial answer is discarded"}
}

// Fail turns partial into a final failed assistant message: StopAborted for KindAborted,
// StopError otherwise. Content received so far is kept for the record.
func Fail(partial *Message, err *Error) *Message {
	partial.Role = RoleAssistant
	partial.Err = err
	partial.StopReason = StopError
	if err.Kind == KindAborted {
		partial.StopReason = StopAborted
	}
	return partial
}
