package kernel

import (
	"errors"
	"fmt"

	"github.com/reinhq/rein/internal/llm"
)

// ErrAborted is returned (wrapped) when the run's context was cancelled.
var ErrAborted = errors.New("run aborted")

// BudgetError says a run stopped because a budget was reached.
type BudgetError struct {
	Budget string // "turns", "cost", "tokens" or "elapsed"
	Limit  float64
	Used   float64
}

func (e *BudgetError) Error() string {
	switch e.Budget {
	case "tokens":
		return fmt.Sprintf("token budget exhausted: %d of %d tokens used", int(e.Used), int(e.Limit))
	case "elapsed":
		return "elapsed-time budget exhausted: the deadline has passed"
	}
	if e.Budget == "cost" {
		return fmt.Sprintf("cost budget exhausted: spent $%.4f of $%.4f (raise --max-cost to continue)", e.Used, e.Limit)
	}
	return fmt.Sprintf("turn budget exhausted: %d of %d turns used (raise --max-turns to continue)", int(e.Used), int(e.Limit))
}

// ModelError says the model call of a turn failed (after retries).
type ModelError struct {
	Turn int
	Err  *llm.Error
}

func (e *ModelError) Error() string { return fmt.Sprintf("turn %d: model failed: %v", e.Turn, e.Err) }

// Unwrap returns the provider error.
func (e *ModelError) Unwrap() error { return e.Err }

// RecordError says the recorder failed; the run stopped before any further effect.
type RecordError struct{ Err error }

func (e *RecordError) Error() string { return "recording failed, run stopped: " + e.Err.Error() }

// Unwrap returns the recorder's error.
func (e *RecordError) Unwrap() error { return e.Err }
