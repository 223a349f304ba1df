package run

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/run/contract"
)

// errBatchStopped ends a ticket of a batch because another ticket of the batch failed or was
// blocked; it never leaves runBatch.
var errBatchStopped = errors.New("stopped: another ticket of the batch failed")

// batchLimit is how many tickets of a batch run at the same time: --parallel N when given,
// otherwise (rein run resume) the N the schedule was made with.
func (r *Run) batchLimit(env Env) int {
	if env.Parallel > 0 {
		return env.Parallel
	}
	if s := r.Tickets.Schedule; s != nil && s.Parallel > 0 {
		return s.Parallel
	}
	return 1
}

// runBatch runs the tickets of one dependsOn batch — independent of each other — each in its
// own goroutine, at most batchLimit at a time, each through its own writer → review →
// verification → acceptance pipeline in its own worktree under its own ticket lease. The run
// ledger serializes their records; what they share in memory and write is under
// ticketState.mu; what they share and only read — the execution lock, the snapshot, the
// schedule, the accepted tickets of earlier batches — nothing writes while the batch runs
// (runTickets reconciles the locked inputs before each batch fans out, and a ticket's own
// drift check, ticketSkills, only records a blocker); the role budgets are reserved turn by
// turn across them (turnReservation).
//
// When a ticket fails or is blocked, no ticket of the batch starts after it and every other
// one finishes the attempt it is in (recorded as any attempt is) and stops before its next
// writer attempt; then runBatch returns the failure. ctx's cancellation (Ctrl-C, SIGTERM)
// reaches every session at once; what it interrupts, resume settles by evidence.
//
// The result does not depend on how the tickets interleaved: the failures are reported in the
// batch's order (the blockers of several tickets as one *BlockedError), with the id of the
// first failing ticket.
func (r *Run) runBatch(ctx context.Context, env Env, l *ledger.Ledger, batch []string, byID map[string]contract.Ticket) (string, error) {
	var stop atomic.Bool
	errs := make([]error, len(batch))
	slots := make(chan struct{}, r.batchLimit(env))
	var wg sync.WaitGroup
	for i, id := range batch {
		slots <- struct{}{}
		if stop.Load() {
			<-slots
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			err := r.runTicket(ctx, env, l, byID[id], stop.Load)
			if err != nil && !errors.Is(err, errBatchStopped) {
				stop.Store(true)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return batchFailure(r.ID, batch, errs)
}

// batchFailure is the outcome of a batch from its tickets' errors (in batch order): nil when
// none failed; the first failing ticket's id and its error; the blockers of every blocked
// ticket, in batch order, as one *BlockedError when every failure is a blocker; otherwise
// every failure joined, in batch order.
func batchFailure(runID string, batch []string, errs []error) (string, error) {
	first := ""
	var failed []error
	var blockers []Blocker
	allBlocked := true
	for i, err := range errs {
		if err == nil || errors.Is(err, errBatchStopped) {
			continue
		}
		if first == "" {
			first = batch[i]
		}
		failed = append(failed, err)
		var be *BlockedError
		if errors.As(err, &be) {
			blockers = append(blockers, be.Blockers...)
		} else {
			allBlocked = false
		}
	}
	switch {
	case len(failed) == 0:
		return "", nil
	case len(failed) == 1:
		return first, failed[0]
	case allBlocked:
		return first, &BlockedError{RunID: runID, Blockers: blockers}
	}
	return first, errors.Join(failed...)
}
