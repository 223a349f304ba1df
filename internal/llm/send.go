package llm

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotSent wraps the error of a send gate ([WithSendGate]) that refused: the request was
// built but never left the process.
var ErrNotSent = errors.New("the request was not sent")

type sendGateKey struct{}

// WithSendGate returns ctx carrying gate. An adapter calls [AwaitSend] with the call's
// context once its request is built and before any of it leaves the process, and sends
// nothing when it fails: the kernel passes the wait for its model-call intent's fsync this
// way, so that the request is built while the intent becomes durable. gate may be called more
// than once (every attempt of a retried call asks it) and must return the same answer.
func WithSendGate(ctx context.Context, gate func() error) context.Context {
	return context.WithValue(ctx, sendGateKey{}, gate)
}

// AwaitSend asks the send gate ctx carries, if any; an error wraps [ErrNotSent].
func AwaitSend(ctx context.Context) error {
	gate, _ := ctx.Value(sendGateKey{}).(func() error)
	if gate == nil {
		return nil
	}
	if err := gate(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return nil
}
