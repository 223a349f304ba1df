package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reinhq/rein/internal/lease"
	"github.com/reinhq/rein/internal/ledger"
)

// LeaseFile is the name of a run's lease under $REIN_HOME/runs/<run-id>/.
const LeaseFile = "lease.json"

// KindLeaseTakenOver records that `rein run next` or `rein run resume` found the lease of a
// process that no longer runs and took it over; the body is the stale lease.
const KindLeaseTakenOver = "run.lease.taken_over"

// ErrRunning: a live process holds the run's lease (another `rein run next` or `rein run
// resume` is running the run); nothing was done.
var ErrRunning = errors.New("run is running")

// Lease names the process that runs a run's stage: it is created (O_EXCL) by `rein run next`
// and `rein run resume` before they touch the run and removed when they end. A lease left
// behind names a process that died: status reports the run interrupted. (internal/lease.)
type Lease = lease.Lease

// LeaseState is a lease as status sees it.
type LeaseState = lease.State

// readLease reads run id's lease; nil when there is none.
func readLease(home, id string) (*LeaseState, error) {
	return lease.Read(filepath.Join(runDir(home, id), LeaseFile))
}

// heldError is the refusal while another process holds the lease.
func heldError(id string, l *LeaseState) error {
	how := ""
	if !l.Checked {
		how = " (on another host: its liveness cannot be checked from here; if that process is gone, delete " + filepath.Join("$REIN_HOME", "runs", id, LeaseFile) + ")"
	}
	return fmt.Errorf("%w: run %s is being run by `rein run %s` (pid %d on %s since %s)%s; wait for it to end, or look with `rein run status %s`",
		ErrRunning, id, l.Command, l.PID, l.Host, l.Acquired.Format(time.RFC3339), how, id)
}

// withLease runs f while holding run id's lease for command. A live holder refuses with
// ErrRunning; a lease whose process is gone is taken over and the takeover recorded in the
// run ledger.
func withLease(env Env, id, command string, f func() error) error {
	if !ledger.ValidID(id) {
		return fmt.Errorf("%w: %q", ErrNoRun, id)
	}
	if _, err := os.Stat(filepath.Join(runDir(env.Home, id), ledger.FileName)); err != nil {
		return fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	old, release, err := lease.Acquire(filepath.Join(runDir(env.Home, id), LeaseFile), command, env.now())
	var held *lease.HeldError
	if errors.As(err, &held) {
		return heldError(id, held.Holder)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	defer release()
	if old != nil {
		if err := recordTakeover(env, id, *old); err != nil {
			return err
		}
	}
	return f()
}

// recordTakeover records the stale lease that was taken over.
func recordTakeover(env Env, id string, old Lease) error {
	_, l, err := env.openRun(id)
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = l.Append(ledger.Entry{Kind: KindLeaseTakenOver, Body: old})
	return err
}

// createLease writes this process's lease to path, failing when one exists.
func createLease(path, command string, now time.Time) error { return lease.Create(path, command, now) }
