package refusal

import (
	"errors"
	"fmt"
)

// Code classifies a refusal. Codes are stable strings: logs, ledgers and exit-code tables key
// on them, so a code is never renamed once released.
type Code string

// Error is a refusal: a code for programs and a message for people and models that says what
// happened and what to do instead.
type Error struct {
	Code    Code
	Message string
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error with the same code, so errors.Is(err, &Error{Code: c}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == "" && t.Err == nil
}

// CodeOf returns the code of the first *Error in err's chain.
func CodeOf(err error) (Code, bool) {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code, true
	}
	return "", false
}

// Errorf returns an *Error with code and a message formatted as by [fmt.Sprintf].
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
