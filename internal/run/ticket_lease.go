package run

import (
	"fmt"
	"os"
	"time"

	"github.com/reinhq/rein/internal/lease"
	"github.com/reinhq/rein/internal/ledger"
)

// takeTicketLease records this process's lease on ticket t for the attempt session sid. A
// lease recorded and not released names the process that ran the ticket's last attempt: a
// live one (on this host) refuses with [ErrRunning]; one on another host cannot be checked and
// blocks (BlockTicketLeaseHeld), never reclaimed automatically; one whose process is proven
// dead (no such pid, or another start time) is reclaimed, the reclaim recorded with its
// evidence.
func (r *Run) takeTicketLease(env Env, l *ledger.Ledger, t *ticketRun, sid string) error {
	if err := r.reclaimTicketLease(l, t); err != nil {
		return err
	}
	host, _ := os.Hostname()
	start, _ := lease.ProcessStart(os.Getpid())
	b := ticketLeaseBody{Ticket: t.ID, SessionID: sid,
		Lease: Lease{PID: os.Getpid(), StartTime: start, Host: host, Command: "next", Acquired: env.now().Truncate(time.Millisecond)}}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketLease, Body: b}); err != nil {
		return err
	}
	t.Lease = &b
	return nil
}

// reclaimTicketLease settles a lease left on t by a process that ended without releasing it
// (see takeTicketLease); it does nothing when t holds no lease.
func (r *Run) reclaimTicketLease(l *ledger.Ledger, t *ticketRun) error {
	old := t.Lease
	if old == nil {
		return nil
	}
	host, _ := os.Hostname()
	if old.Host != host {
		b := Blocker{Code: BlockTicketLeaseHeld, Stage: StageTicketExecution, Ticket: t.ID,
			Detail: fmt.Sprintf("ticket %s is leased by pid %d on host %s (session %s) since %s; its liveness cannot be checked from %s, so the lease is never reclaimed automatically",
				t.ID, old.PID, old.Host, old.SessionID, old.Acquired.Format(time.RFC3339), host),
			Recovery: []string{fmt.Sprintf("on %s, make sure pid %d has ended and run `rein run resume %s` there: it proves the owner dead and reclaims the lease", old.Host, old.PID, r.ID),
				"abort the run (rein run abort " + r.ID + ") and start a new one"}}
		// Reported, never recorded: its recovery on the owner's host must not meet it.
		return &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
	}
	cur, err := lease.ProcessStart(old.PID)
	alive := lease.Alive(old.PID, old.StartTime)
	if alive {
		return fmt.Errorf("%w: ticket %s of run %s is leased by the live process %d (session %s, since %s); never two writers on one ticket: wait for it to end",
			ErrRunning, t.ID, r.ID, old.PID, old.SessionID, old.Acquired.Format(time.RFC3339))
	}
	evidence := fmt.Sprintf("no process %d runs on %s", old.PID, host)
	if err == nil {
		evidence = fmt.Sprintf("process %d on %s started at %s, the lease's owner at %s: another process reuses the pid", old.PID, host, cur, old.StartTime)
	}
	body := *old
	body.Evidence = evidence
	if _, err := l.Append(ledger.Entry{Kind: KindTicketLeaseReclaimed, Body: body}); err != nil {
		return err
	}
	t.Lease = nil
	return nil
}

// releaseTicketLease records that this process's attempt on t ended.
func (r *Run) releaseTicketLease(l *ledger.Ledger, t *ticketRun) error {
	if t.Lease == nil {
		return nil
	}
	b := *t.Lease
	if _, err := l.Append(ledger.Entry{Kind: KindTicketLeaseReleased, Body: b}); err != nil {
		return err
	}
	t.Lease = nil
	return nil
}

// recordBlocker records b once (a blocker already recorded and not lifted is not recorded
// again) and returns it as a *BlockedError.
func (r *Run) recordBlocker(l *ledger.Ledger, b Blocker) error {
	defer r.lockTickets()() // tickets of a batch may record blockers at the same time
	recorded := false
	for _, o := range r.Blockers {
		if sameBlocker(o, b) {
			recorded = true
		}
	}
	if !recorded {
		if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
			return err
		}
		r.Blockers = append(r.Blockers, b)
	}
	return &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
}
