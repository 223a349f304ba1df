package run

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// StatusSchemaVersion is the version of `rein run status --json` ([Report]); it changes when
// a field changes meaning or goes away (the README documents every field).
const StatusSchemaVersion = 1

// Run states: the external loop's vocabulary (README, "Run states").
const (
	StateReady           = "ready"             // nothing runs; `rein run next` runs the next stage
	StateRunning         = "running"           // a live process holds the run's lease
	StateWaitingForHuman = "waiting_for_human" // a gate or Clarification waits for a person
	StateBlocked         = "blocked"           // a blocker stops the run until one of its recoveries
	StateInterrupted     = "interrupted"       // the process that ran a stage died: resume
	StateCompleted       = "completed"         // the run reached its terminal stage
	StateAborted         = "aborted"           // the run was aborted
)

// Waiting is what a run in waiting_for_human waits for: a gate's decision on an artifact, or
// Clarification's answers, with the commands that give them.
type Waiting struct {
	Kind     string `json:"kind"` // gate, clarification or integration
	Stage    string `json:"stage"`
	Gate     string `json:"gate,omitempty"`
	Artifact string `json:"artifact,omitempty"` // the artifact id the gate decides on
	Path     string `json:"path,omitempty"`
	Digest   string `json:"digest,omitempty"`
	// Questions are the ids Clarification must answer (required unknowns, required gaps).
	Questions []string `json:"questions,omitempty"`
	// Ticket and Files name an integration conflict: the ticket that does not merge and the
	// conflicting files.
	Ticket   string   `json:"ticket,omitempty"`
	Files    []string `json:"files,omitempty"`
	Commands []string `json:"commands"`
}

// setState decides the report's state from the run, its lease and the report's blockers.
func (r *Run) setState(env Env, rep *Report) {
	if lease, err := readLease(env.Home, r.ID); err == nil && lease != nil && lease.PID > 0 {
		rep.Lease = lease
	}
	interrupted := rep.Lease != nil && !rep.Lease.Live || len(r.Unsettled) > 0 || len(r.Uncompleted) > 0
	switch {
	case r.Aborted:
		rep.State = StateAborted
	case rep.Lease != nil && rep.Lease.Live:
		rep.State = StateRunning
	case len(rep.Blockers) > 0:
		rep.State = StateBlocked
	case interrupted:
		rep.State, rep.Command = StateInterrupted, "rein run resume "+r.ID
	case r.waiting() != nil:
		rep.State, rep.Waiting = StateWaitingForHuman, r.waiting()
	case slices.ContainsFunc(DeliveryWorkflow().Stages, func(s WorkflowStage) bool { return s.ID == r.Stage && s.Kind == KindTerminal }):
		rep.State = StateCompleted
	default:
		rep.State, rep.Command = StateReady, "rein run next "+r.ID
	}
}

// waiting is what the run waits for from a person at its current stage, or nil.
func (r *Run) waiting() *Waiting {
	if c := r.Delivery.Conflict; c != nil && r.Stage == StageManualIntegration {
		return &Waiting{Kind: "integration", Stage: StageManualIntegration, Ticket: c.Ticket, Files: c.Files,
			Commands: []string{"rein run resume " + r.ID, "rein run abort " + r.ID}}
	}
	for _, gd := range gates {
		gate, def := gd.name, gd.def
		if r.Stage != def.stage {
			continue
		}
		w := &Waiting{Kind: "gate", Stage: def.stage, Gate: gate,
			Commands: []string{"rein run reject " + r.ID + " --gate " + gate + " --reason TEXT"}}
		if art, ok := r.gateArtifact(gate); ok {
			w.Artifact, w.Path, w.Digest = art.ID, art.Path, string(art.Digest)
			w.Commands = append([]string{"rein run approve " + r.ID + " --gate " + gate + " --digest " + string(art.Digest)}, w.Commands...)
		}
		return w
	}
	if r.Stage != StageClarification || r.Clarification != nil {
		return nil
	}
	res, err := r.researchContract(nil)
	if err != nil {
		return nil
	}
	ids := r.openRequired(res)
	if len(ids) == 0 {
		return nil
	}
	return &Waiting{Kind: "clarification", Stage: StageClarification, Questions: ids,
		Commands: []string{"rein run clarify " + r.ID + " --answers FILE"}}
}

// writeState writes what the state needs a person to know: the lease, what the run waits for,
// the command that goes on.
func (rep *Report) writeState(w io.Writer) {
	if l := rep.Lease; l != nil {
		live := "process gone"
		switch {
		case l.Live && !l.Checked:
			live = "on another host, not checked"
		case l.Live:
			live = "live"
		}
		fmt.Fprintf(w, "lease: pid %d on %s (rein run %s since %s, %s)\n", l.PID, l.Host, l.Command, l.Acquired.Format(time.RFC3339), live)
	}
	switch rep.State {
	case StateInterrupted:
		fmt.Fprintf(w, "interrupted: resume with %s\n", rep.Command)
	case StateReady:
		fmt.Fprintf(w, "next: %s\n", rep.Command)
	}
	if wt := rep.Waiting; wt != nil {
		if wt.Kind == "gate" {
			fmt.Fprintf(w, "waiting: gate %s (%s) on %s %s digest %s\n", wt.Gate, wt.Stage, orDash(wt.Artifact), orDash(wt.Path), orDash(wt.Digest))
		} else if wt.Kind == "integration" {
			fmt.Fprintf(w, "waiting: integration conflict: ticket %s does not merge; conflicting files: %s (resolve it on the branch by hand, then resume)\n", wt.Ticket, strings.Join(wt.Files, ", "))
		} else {
			fmt.Fprintf(w, "waiting: clarification of %s\n", strings.Join(wt.Questions, ", "))
		}
		for _, c := range wt.Commands {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
}

// String is the cause for a person: its code and particulars.
func (c *Cause) String() string {
	var parts []string
	if c.ErrorKind != "" {
		parts = append(parts, c.ErrorKind)
	}
	if c.HTTPStatus != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", c.HTTPStatus))
	}
	if c.Budget != "" {
		parts = append(parts, c.Budget)
	}
	for _, code := range slices.Sorted(maps.Keys(c.Problems)) {
		parts = append(parts, fmt.Sprintf("%s×%d", code, c.Problems[code]))
	}
	if len(parts) == 0 {
		return c.Code
	}
	return c.Code + " (" + strings.Join(parts, ", ") + ")"
}
