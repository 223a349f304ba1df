package loop

import "errors"

// Sentinel errors; internal/cli maps each to an exit code (README, "Exit codes").
var (
	// ErrInvalidContract: the contract file cannot be used (each problem names file:line).
	ErrInvalidContract = errors.New("invalid loop contract")
	// ErrNoLoop: no loop has the given id (or none was started).
	ErrNoLoop = errors.New("no such loop")
	// ErrRunning: a live process holds the loop's lease.
	ErrRunning = errors.New("loop is running")
	// ErrBlocked: the loop is blocked (drift, budget, a stop rule, a gate timeout) or waits
	// for a person; status names what unblocks it.
	ErrBlocked = errors.New("loop is blocked")
	// ErrFinished: the loop is completed or aborted; nothing more runs.
	ErrFinished = errors.New("loop is finished")
	// ErrUnsupported: the contract asks for something this rein does not do yet.
	ErrUnsupported = errors.New("not supported yet")
	// ErrNoGate: no pending human gate has the given id.
	ErrNoGate = errors.New("no such pending human gate")
)
