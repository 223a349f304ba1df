package loop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrTrigger: a trigger or a serve setting cannot be used (a --trigger that differs from the
// contract's, a watch path outside the workspace, a listen address that is not loopback, a
// webhook token file others can read, nothing that could fire a round).
var ErrTrigger = errors.New("invalid trigger")

// MinEvery is the shortest schedule of an "every" trigger: each round is a model session.
const MinEvery = time.Minute

// Trigger kinds.
const (
	TriggerManual  = "manual"
	TriggerEvery   = "every"
	TriggerWatch   = "watch"
	TriggerWebhook = "webhook"
)

// Dispositions of a firing.
const (
	// FiringRun: the firing starts a round now.
	FiringRun = "run"
	// FiringQueued: a round was running; one more round runs after it.
	FiringQueued = "queued"
	// FiringCoalesced: a round was running and one was already queued; this firing joins it.
	FiringCoalesced = "coalesced"
	// FiringDropped: recorded when serve ends with a round still queued (the round it waited
	// for ended in a state other than ready, or serve was stopped): the queued round never
	// runs; Reason says why. It names the queued firing's kind and source.
	FiringDropped = "dropped"
)

// Firing is one firing of a trigger, the body of loop.trigger.
type Firing struct {
	Kind string    `json:"kind"` // manual, every, watch, webhook
	At   time.Time `json:"at"`
	// Source: manual, the command; every, the schedule; watch, the watched paths; webhook,
	// the remote address.
	Source      string   `json:"source,omitempty"`
	Paths       []string `json:"paths,omitempty"`     // watch: the changed paths (at most maxFiringPaths)
	MorePaths   int      `json:"morePaths,omitempty"` // watch: changed paths left out of Paths
	Note        string   `json:"note,omitempty"`      // webhook: the body's note, secrets redacted
	Disposition string   `json:"disposition"`
	Reason      string   `json:"reason,omitempty"` // dropped: why the queued round never runs
}

const maxFiringPaths = 20

// String is t as a contract writes it.
func (t Trigger) String() string {
	switch t.Kind {
	case TriggerEvery:
		return "every " + t.Every
	case TriggerWatch:
		return "watch " + strings.Join(t.Paths, " ")
	}
	return t.Kind
}

// everyProblem says what is wrong with an every trigger's duration, or "".
func everyProblem(s string) string {
	d, err := time.ParseDuration(s)
	if err != nil || d < MinEvery {
		return fmt.Sprintf("every needs a duration of at least %s, such as 10m (each round is a model session)", MinEvery)
	}
	return ""
}

// watchPaths normalizes a watch trigger's paths: relative to the workspace, inside it, not
// under .rein or .git (rein and git write there; such changes never fire).
func watchPaths(ps []string, bad func(string)) []string {
	var out []string
	for _, p := range ps {
		c := filepath.ToSlash(filepath.Clean(p))
		parts := strings.Split(c, "/")
		switch {
		case filepath.IsAbs(p) || c == ".." || strings.HasPrefix(c, "../"):
			bad(fmt.Sprintf("watch path %q must be relative to the workspace and inside it", p))
		case slices.Contains(parts, ".rein") || slices.Contains(parts, ".git"):
			bad(fmt.Sprintf("watch path %q is under .rein or .git, whose changes never fire a round", p))
		}
		out = append(out, c)
	}
	return sortedSet(out)
}

// startTrigger is the trigger a loop starts with: the contract's; a --trigger flag must say
// the same (the trigger is part of the locked contract). Watch paths must stay inside ws.
func startTrigger(contract Trigger, flag, ws string) (Trigger, error) {
	if flag != "" {
		var bad error
		t := parseTrigger(flag, func(msg string) {
			bad = errors.Join(bad, errors.New(msg))
		})
		if bad != nil {
			return t, fmt.Errorf("%w: --trigger %q: %w", ErrTrigger, flag, bad)
		}
		if t.String() != contract.String() {
			return t, fmt.Errorf("%w: --trigger %q differs from the contract's trigger %q; the trigger is part of the locked contract: change the contract's trigger (then rein loop validate), or leave --trigger out", ErrTrigger, t.String(), contract.String())
		}
	}
	if contract.Kind == TriggerWatch {
		if err := confined(ws, contract.Paths); err != nil {
			return contract, err
		}
	}
	return contract, nil
}

// confined refuses a watch path that leaves ws (through a symlink, say); a path that does
// not exist yet is fine.
func confined(ws string, paths []string) error {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return fmt.Errorf("%w: the workspace %s: %w", ErrTrigger, ws, err)
	}
	defer root.Close()
	for _, p := range paths {
		if _, err := root.Lstat(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: watch path %q: %w (watch paths stay inside the workspace %s)", ErrTrigger, p, err, ws)
		}
	}
	return nil
}

// runFiring is the firing `rein loop run` records before each of its rounds.
func runFiring(v *view, at time.Time) Firing {
	f := Firing{Kind: TriggerManual, At: at, Source: "rein loop run", Disposition: FiringRun}
	if v.Started.Trigger.Kind == TriggerEvery {
		f.Kind, f.Source = TriggerEvery, v.Started.Trigger.String()+" (rein loop run)"
	}
	return f
}
