package run

import (
	"fmt"
	"time"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/sandbox"
)

// KindSandbox records that the run's approved commands run in the OS sandbox from then on:
// the first `rein run next|resume` that asks for it (--sandbox or the global settings'
// "sandbox") records it; every later invocation on the run builds the sandbox too. The
// decision is never undone: there is no way to run the run's commands unsandboxed after it.
const KindSandbox = "run.sandbox"

// SandboxCovers names the approved commands the run's OS sandbox wraps.
var SandboxCovers = []string{"run_command", "candidate-checks", "ticket-verification", "full-run-verification"}

// SandboxConfines says what the run's OS sandbox confines each approved command to.
const SandboxConfines = "no network; only the worktree or clean checkout the command runs in is writable; $REIN_HOME hidden; system directories and the Go module cache read-only"

// SandboxDecision is the run's recorded sandbox decision (KindSandbox's body); its zero
// value, Sandboxed false, is a run whose commands run unsandboxed.
type SandboxDecision struct {
	Sandboxed bool `json:"sandboxed"`
	// By is what asked for it: "--sandbox" or "settings" (the global settings' "sandbox").
	By string `json:"by,omitempty"`
	// Command is the rein run command that recorded it: next or resume.
	Command string `json:"command,omitempty"`
	// At is when it was recorded.
	At time.Time `json:"at,omitzero"`
	// Covers names the approved commands the sandbox wraps (SandboxCovers).
	Covers []string `json:"covers,omitempty"`
	// Confines says what each of them is confined to (SandboxConfines).
	Confines string `json:"confines,omitempty"`
}

// String says where and how the decision was recorded.
func (d SandboxDecision) String() string {
	return fmt.Sprintf("recorded by `rein run %s` (%s) at %s", d.Command, d.By, d.At.Format(time.RFC3339))
}

// RecordedSandbox is run id's recorded sandbox decision (read-only: nothing is written).
func RecordedSandbox(env Env, id string) (SandboxDecision, error) {
	r, l, err := openRunMode(env.Home, id, true)
	if err != nil {
		return SandboxDecision{}, err
	}
	l.Close()
	return r.Sandbox, nil
}

// withSandbox applies the run's sandbox decision to env for command (next or resume): an
// env with a sandbox on a run that recorded none records it; a run that recorded one gets
// its sandbox from env.NewSandbox when env has none, and stops — fails closed, wrapping
// sandbox.ErrUnavailable, naming the recorded decision — when none can be built: no
// approved command of a sandboxed run ever runs unsandboxed.
func (r *Run) withSandbox(env Env, l *ledger.Ledger, command string) (Env, error) {
	switch {
	case env.Sandbox != nil && !r.Sandbox.Sandboxed:
		by := env.SandboxBy
		if by == "" {
			by = "--sandbox"
		}
		d := SandboxDecision{Sandboxed: true, By: by, Command: command, At: env.now().Truncate(time.Millisecond),
			Covers: SandboxCovers, Confines: SandboxConfines}
		if _, err := l.Append(ledger.Entry{Kind: KindSandbox, Body: d}); err != nil {
			return env, err
		}
		r.Sandbox = d
	case env.Sandbox == nil && r.Sandbox.Sandboxed:
		refuse := func(err error) (Env, error) {
			return env, fmt.Errorf("run %s's approved commands run in the OS sandbox (%s), and never unsandboxed after that; no sandbox can be built here, so nothing ran: install bubblewrap (package bubblewrap), or abort the run (rein run abort %s): %w",
				r.ID, r.Sandbox, r.ID, err)
		}
		if env.NewSandbox == nil {
			return refuse(fmt.Errorf("%w: this caller of the run engine builds no sandbox", sandbox.ErrUnavailable))
		}
		sb, err := env.NewSandbox()
		if err != nil {
			return refuse(err)
		}
		if sb == nil {
			return refuse(fmt.Errorf("%w: the sandbox builder returned none", sandbox.ErrUnavailable))
		}
		env.Sandbox = sb
	}
	return env, nil
}
