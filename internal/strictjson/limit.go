package strictjson

import (
	"errors"
	"fmt"
)

// ErrTooLarge is wrapped by the error [Options.Decode] and [Options.Unmarshal] return for a
// document over [Options.MaxDocumentBytes].
var ErrTooLarge = errors.New("JSON document too large")

// Options add limits to [Decode] and [Unmarshal] for untrusted input. The zero value adds
// none.
type Options struct {
	// MaxDocumentBytes, when positive, is the largest document accepted; a larger one is
	// refused before it is parsed.
	MaxDocumentBytes int
}

func (o Options) check(n int) error {
	if o.MaxDocumentBytes > 0 && n > o.MaxDocumentBytes {
		return fmt.Errorf("(root): %w: %d bytes, more than the %d accepted; send a smaller document", ErrTooLarge, n, o.MaxDocumentBytes)
	}
	return nil
}

// Decode is [Decode] with the limits of o.
func (o Options) Decode(text string) (any, error) {
	if err := o.check(len(text)); err != nil {
		return nil, err
	}
	return Decode(text)
}

// Unmarshal is [Unmarshal] with the limits of o.
func (o Options) Unmarshal(data []byte, v any) error {
	if err := o.check(len(data)); err != nil {
		return err
	}
	return Unmarshal(data, v)
}
