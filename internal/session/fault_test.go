package session_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
)

// acking records which intents and entries the session acknowledged (returned nil for).
type acking struct {
	*session.Session
	acked []string
}

func (a *acking) Intend(ctx context.Context, in kernel.Intent) error {
	err := a.Session.Intend(ctx, in)
	if err == nil {
		a.acked = append(a.acked, in.ID)
	}
	return err
}

func (a *acking) Settle(ctx context.Context, s kernel.Settlement) error {
	err := a.Session.Settle(ctx, s)
	if err == nil {
		for _, e := range s.Entries {
			a.acked = append(a.acked, e.ID)
		}
	}
	return err
}

// TestWriteFaultsStopTheRunAndLoseNothingAcknowledged injects ENOSPC, a short write and an
// fsync error at every write and sync of a run: the run stops with the error (or, for the fsync
// the last settlement rides on, Close returns it), nothing more is written, and reopening finds
// every acknowledged record.
func TestWriteFaultsStopTheRunAndLoseNothingAcknowledged(t *testing.T) {
	faults := map[string]func(op ledgertest.Op) *ledgertest.Fault{
		"enospc": func(op ledgertest.Op) *ledgertest.Fault {
			return &ledgertest.Fault{Err: syscall.ENOSPC}
		},
		"short-write": func(op ledgertest.Op) *ledgertest.Fault {
			return &ledgertest.Fault{Written: op.Size / 2}
		},
		"fsync-eio": func(op ledgertest.Op) *ledgertest.Fault {
			return &ledgertest.Fault{Err: syscall.EIO}
		},
	}
	kinds := map[string]string{"enospc": "write", "short-write": "write", "fsync-eio": "sync"}
	for name, fault := range faults {
		for k := 1; ; k++ {
			ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
			seen := 0
			fired := false
			ffs := &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(op ledgertest.Op) *ledgertest.Fault {
				if op.Kind != kinds[name] || filepath.Base(op.Name) != ledger.FileName {
					return nil
				}
				if seen++; seen == k {
					fired = true
					return fault(op)
				}
				return nil
			}}
			s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			s, _, err = session.Open(dir, session.Options{Ledger: ledger.Options{FS: ffs}})
			if err != nil {
				t.Fatal(err)
			}
			seen = 0 // count the run's operations only
			rec := &acking{Session: s}
			_, runErr := newAgent(t, ws, twoTurns, rec).Run(context.Background(), nil, llm.UserText("go"))
			closeErr := s.Close()
			label := fmt.Sprintf("%s at op %d", name, k)
			if fired && runErr == nil {
				// The final answer rides on the fsync of Close (no intent follows it): the
				// fault must reach Close's caller instead.
				if !errors.Is(closeErr, ledger.ErrFaulted) {
					t.Fatalf("%s: the fault reached neither the run nor Close (%v)", label, closeErr)
				}
				runErr = &kernel.RecordError{Err: closeErr}
			}
			if !fired {
				if runErr != nil {
					t.Fatalf("%s: run failed without a fault: %v", label, runErr)
				}
				if k == 1 {
					t.Fatalf("%s: the run made no %s operations", label, kinds[name])
				}
				t.Logf("%s: faulted each of %d operations", name, k-1)
				break
			}
			var re *kernel.RecordError
			if !errors.As(runErr, &re) {
				t.Fatalf("%s: run error %v, want a RecordError reaching the caller", label, runErr)
			}
			re2, _, err := session.Open(dir, session.Options{})
			if err != nil {
				t.Fatalf("%s: reopen: %v", label, err)
			}
			for _, id := range rec.acked {
				if !re2.Has(id) {
					t.Errorf("%s: acknowledged record %s is lost", label, id)
				}
			}
			re2.Close()
		}
	}
}
