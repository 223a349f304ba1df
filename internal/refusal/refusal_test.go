package refusal

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestRefusal(t *testing.T) {
	const c Code = "test.code"
	err := fmt.Errorf("context: %w", &Error{Code: c, Message: "do this instead", Err: io.EOF})
	if got, ok := CodeOf(err); !ok || got != c {
		t.Errorf("CodeOf = %q, %v", got, ok)
	}
	if !errors.Is(err, &Error{Code: c}) || errors.Is(err, &Error{Code: "other"}) {
		t.Error("errors.Is does not match by code alone")
	}
	if errors.Is(err, &Error{Code: c, Message: "x"}) {
		t.Error("a target with a message matched")
	}
	if !errors.Is(err, io.EOF) {
		t.Error("the cause is not unwrapped")
	}
	if err.Error() != "context: test.code: do this instead" {
		t.Errorf("Error() = %q", err.Error())
	}
	if _, ok := CodeOf(io.EOF); ok {
		t.Error("CodeOf found a code in a plain error")
	}
	if e := Errorf(c, "%d files", 3); e.Code != c || e.Message != "3 files" || e.Err != nil {
		t.Errorf("Errorf = %+v", e)
	}
}
