package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
// behind names a process that died: status reports the run interrupted.
type Lease struct {
	PID int `json:"pid"`
	// StartTime is the process's start time as the OS reports it (on Linux /proc/PID/stat's
	// 22nd field, clock ticks since boot); with the pid it names one process, never a later
	// one that reuses the pid. "" where the OS offers none.
	StartTime string    `json:"startTime"`
	Host      string    `json:"host"`
	Command   string    `json:"command"` // next or resume
	Acquired  time.Time `json:"acquired"`
}

// LeaseState is a lease as status sees it.
type LeaseState struct {
	Lease
	// Live: the process is running (on another host it cannot be checked and counts as live).
	Live bool `json:"live"`
	// Checked is false when the holder is on another host and its liveness was not checked.
	Checked bool `json:"checked"`
}

// readLease reads run id's lease; nil when there is none.
func readLease(home, id string) (*LeaseState, error) {
	data, err := os.ReadFile(filepath.Join(runDir(home, id), LeaseFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lease
	if err := json.Unmarshal(data, &l); err != nil || l.PID <= 0 {
		// A lease torn by a crash while it was written: its writer died before it held it.
		return &LeaseState{}, nil
	}
	st := &LeaseState{Lease: l}
	host, _ := os.Hostname()
	if l.Host != host {
		st.Live = true
		return st, nil
	}
	st.Checked = true
	st.Live = processAlive(l.PID, l.StartTime)
	return st, nil
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
	old, err := readLease(env.Home, id)
	if err != nil {
		return fmt.Errorf("run %s: read its lease: %w", id, err)
	}
	if old != nil && old.Live {
		return heldError(id, old)
	}
	path := filepath.Join(runDir(env.Home, id), LeaseFile)
	if old != nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("run %s: remove the stale lease of pid %d: %w", id, old.PID, err)
		}
	}
	if err := createLease(path, command, env.now()); err != nil {
		if errors.Is(err, os.ErrExist) {
			if cur, rerr := readLease(env.Home, id); rerr == nil && cur != nil {
				return heldError(id, cur)
			}
		}
		return fmt.Errorf("run %s: take its lease: %w", id, err)
	}
	defer os.Remove(path)
	if old != nil && old.PID > 0 {
		if err := recordTakeover(env.Home, id, old.Lease); err != nil {
			return err
		}
	}
	return f()
}

// createLease writes this process's lease to path, failing when one exists.
func createLease(path, command string, now time.Time) error {
	host, _ := os.Hostname()
	start, _ := processStart(os.Getpid())
	data, err := json.Marshal(Lease{PID: os.Getpid(), StartTime: start, Host: host, Command: command, Acquired: now})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// recordTakeover records the stale lease that was taken over.
func recordTakeover(home, id string, old Lease) error {
	_, l, err := openRun(home, id)
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = l.Append(ledger.Entry{Kind: KindLeaseTakenOver, Body: old})
	return err
}

// processAlive reports whether the process pid, started at start ("" when unknown), runs.
func processAlive(pid int, start string) bool {
	cur, err := processStart(pid)
	if errors.Is(err, errNoStartTime) {
		return signalZero(pid)
	}
	if err != nil {
		return false
	}
	return start == "" || cur == start
}

// errNoStartTime: the OS gives no process start time here.
var errNoStartTime = errors.New("process start time unavailable")
