package lease

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrHeld: a live process holds the lease.
var ErrHeld = errors.New("lease held by a live process")

// Lease names the process that holds it.
type Lease struct {
	PID int `json:"pid"`
	// StartTime is the process's start time as the OS reports it (on Linux /proc/PID/stat's
	// 22nd field, clock ticks since boot); with the pid it names one process, never a later
	// one that reuses the pid. "" where the OS offers none.
	StartTime string    `json:"startTime"`
	Host      string    `json:"host"`
	Command   string    `json:"command"`
	Acquired  time.Time `json:"acquired"`
}

// State is a lease as a reader sees it.
type State struct {
	Lease
	// Live: the process is running (on another host it cannot be checked and counts as live).
	Live bool `json:"live"`
	// Checked is false when the holder is on another host and its liveness was not checked.
	Checked bool `json:"checked"`
}

// HeldError is [Acquire]'s refusal while a live process holds the lease. errors.Is(err, ErrHeld).
type HeldError struct{ Holder *State }

func (e *HeldError) Error() string {
	return fmt.Sprintf("held by %s (pid %d on %s since %s)", e.Holder.Command, e.Holder.PID, e.Holder.Host, e.Holder.Acquired.Format(time.RFC3339))
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Read reads the lease at path; nil when there is none. A torn lease (its writer died while
// writing it, before it held it) reads as a dead one with pid 0.
func Read(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lease
	if err := json.Unmarshal(data, &l); err != nil || l.PID <= 0 {
		return &State{}, nil
	}
	st := &State{Lease: l}
	host, _ := os.Hostname()
	if l.Host != host {
		st.Live = true
		return st, nil
	}
	st.Checked = true
	st.Live = Alive(l.PID, l.StartTime)
	return st, nil
}

// Acquire takes the lease at path for command: it refuses with a *[HeldError] while a live
// process holds it, removes a dead holder's lease and creates this process's with O_EXCL.
// It returns the dead holder's lease (nil when there was none, or it was torn) and the
// function that releases the lease.
func Acquire(path, command string, now time.Time) (stale *Lease, release func(), err error) {
	old, err := Read(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read the lease: %w", err)
	}
	if old != nil && old.Live {
		return nil, nil, &HeldError{Holder: old}
	}
	if old != nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("remove the stale lease of pid %d: %w", old.PID, err)
		}
	}
	if err := Create(path, command, now); err != nil {
		if errors.Is(err, os.ErrExist) {
			if cur, rerr := Read(path); rerr == nil && cur != nil {
				return nil, nil, &HeldError{Holder: cur}
			}
		}
		return nil, nil, fmt.Errorf("take the lease: %w", err)
	}
	release = func() { os.Remove(path) }
	if old != nil && old.PID > 0 {
		return &old.Lease, release, nil
	}
	return nil, release, nil
}

// Create writes this process's lease to path, failing (os.ErrExist) when one exists; the
// lease is fsynced before Create returns.
func Create(path, command string, now time.Time) error {
	host, _ := os.Hostname()
	start, _ := ProcessStart(os.Getpid())
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

// Alive reports whether the process pid, started at start ("" when unknown), runs.
func Alive(pid int, start string) bool {
	cur, err := ProcessStart(pid)
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
