package run

import (
	"fmt"

	"github.com/reinhq/rein/internal/artifact"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is what `rein run status` shows: ids, digests, versions, branch, stage, gates and
// blockers — never the requirement text, its summary, prompts or transcripts.
type Report struct {
	SchemaVersion int    `json:"schemaVersion"` // StatusSchemaVersion
	RunID         string `json:"runId"`
	Project       string `json:"project"`
	State         string `json:"state"` // a State* value
	// Command is what goes on from a ready run (rein run next) or an interrupted one (rein run
	// resume); Waiting what a waiting_for_human run waits for; Lease the run's lease, if any.
	Command string      `json:"command,omitempty"`
	Waiting *Waiting    `json:"waiting,omitempty"`
	Lease   *LeaseState `json:"lease,omitempty"`
	Stage   string      `json:"stage"`
	Branch  string      `json:"branch,omitempty"`
	// Sandbox is the run's sandbox decision: whether its approved commands run in the OS
	// sandbox (recorded once, for every later invocation), by what and what it covers.
	Sandbox   SandboxDecision  `json:"sandbox"`
	Attempts  map[string]int   `json:"attempts"`
	Stages    []StageReport    `json:"stages"`
	Gates     []GateReport     `json:"gates"`
	Blockers  []Blocker        `json:"blockers"`
	Gaps      []Gap            `json:"gaps"`
	Locked    *Lock            `json:"locked,omitempty"`
	Artifacts []ArtifactReport `json:"artifacts"`
	// Stale lists the artifacts that changed after they were recorded and those made from
	// them (run_artifact_stale: `rein run next` refuses to continue until it is resolved).
	Stale []string `json:"stale"`
	// Relocks are the recorded relocks: input, digests, approver, amendment artifact, and what
	// each invalidated and sent back to be re-run.
	Relocks []LockAmendment      `json:"relocks"`
	Usage   map[string]RoleUsage `json:"usage"`
	// Tickets are the approved plan's tickets once the ticket stages began, in schedule order.
	Tickets []TicketReport `json:"tickets"`
	// Delivery reports the stages after the tickets: integration, checks, summary.
	Delivery *DeliveryReport `json:"delivery,omitempty"`
	History  string          `json:"history"`
}

// StageReport is a model stage's state and its settled attempts.
type StageReport struct {
	Stage    string    `json:"stage"`
	State    string    `json:"state"` // pending, attempted (attempts, none accepted yet), completed, blocked
	Attempts []Attempt `json:"attempts"`
}

// GateReport is a gate's state and the digest it approved ("" while pending).
type GateReport struct {
	Gate   string `json:"gate"`
	Stage  string `json:"stage"`
	State  string `json:"state"` // pending, awaiting approval, approved, rejected, stale
	Digest string `json:"digest,omitempty"`
	By     string `json:"by,omitempty"` // who made the decision the state reports
	Detail string `json:"detail,omitempty"`
}

// ArtifactReport names an artifact by id, path and digests.
type ArtifactReport struct {
	ID         string `json:"id"`
	Path       string `json:"path"`
	Digest     string `json:"digest"`
	FileDigest string `json:"fileDigest"`
}

// RoleUsage is what a role spent.
type RoleUsage struct {
	ModelTurns   int     `json:"modelTurns"`
	Tokens       int     `json:"tokens"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	CostUSD      float64 `json:"costUsd"`
	ElapsedMs    int64   `json:"elapsedMs"`
}

// Status rebuilds run id from its ledger, re-evaluates its blockers against the current
// evidence and reports. It writes nothing anywhere: the ledger is opened read-only and what
// reconciliation finds (new drift, drift that lifted) is reported, never recorded — `rein run
// next` and `rein run resume` record it. A blocked run returns the report and a *BlockedError.
func Status(env Env, id string) (*Report, error) {
	r, l, err := openRunMode(env.Home, id, true)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	rep := &Report{SchemaVersion: StatusSchemaVersion, RunID: r.ID, Project: r.Project, Stage: r.Stage, Attempts: r.Attempts, Blockers: slices.Clone(r.Blockers),
		Gaps: r.Gaps, Locked: r.Lock, Stale: []string{}, Relocks: slices.Clone(r.Relock.Amendments), Usage: map[string]RoleUsage{}, History: HistoryNote, Sandbox: r.Sandbox}
	if rep.Relocks == nil {
		rep.Relocks = []LockAmendment{}
	}
	if !r.Aborted {
		rep.Blockers, _, _ = r.reevaluate(env)
		rep.Locked = r.Lock
		// Reported, never recorded: restoring what changed (or rejecting a stale gate)
		// resolves them.
		rep.Blockers = append(rep.Blockers, r.evidenceBlockers(env)...)
		rep.Blockers = append(rep.Blockers, r.checkBlockers()...)
		if b, err := r.staleBlocker(); err == nil && b != nil {
			rep.Blockers = append(rep.Blockers, *b)
		}
	}
	if rep.Blockers == nil {
		rep.Blockers = []Blocker{}
	}
	if rep.Gaps == nil {
		rep.Gaps = []Gap{}
	}
	if r.Snapshot != nil {
		rep.Branch = r.Snapshot.Branch
	}
	for _, a := range r.Started.Artifacts {
		rep.Artifacts = append(rep.Artifacts, ArtifactReport{a.ID, a.Path, string(a.Digest), string(a.FileDigest)})
	}
	for _, role := range Roles {
		rep.Usage[role] = RoleUsage{}
	}
	if c := r.Clarification; c != nil {
		rep.Artifacts = append(rep.Artifacts, ArtifactReport{c.ID, c.Path, string(c.Digest), string(c.FileDigest)})
	}
	for _, gate := range []string{GateSpec, GateTicketPlan} {
		for _, d := range r.Gates[gate] {
			if c := d.Reason; c != nil {
				rep.Artifacts = append(rep.Artifacts, ArtifactReport{c.ID, c.Path, string(c.Digest), string(c.FileDigest)})
			}
		}
	}
	var stale *artifact.Report
	if st, err := r.staleness(); err == nil {
		stale = &st
		for _, c := range st.Changed {
			rep.Stale = append(rep.Stale, fmt.Sprintf("%s changed: digest %s, recorded %s", c.ID, orDash(string(c.Current)), c.Recorded))
		}
		for _, x := range st.Stale {
			rep.Stale = append(rep.Stale, fmt.Sprintf("%s stale: made from changed %s", x.ID, strings.Join(x.Causes, ", ")))
		}
	}
	for _, s := range DeliveryWorkflow().Stages {
		if s.ID == StageResearch || s.ID == StageClarification || s.ID == StageSpecification || s.ID == StageTicketPlanning {
			sr := StageReport{Stage: s.ID, State: "pending", Attempts: r.StageAttempts[s.ID]}
			switch {
			case r.Stage == s.ID && slices.ContainsFunc(rep.Blockers, func(b Blocker) bool { return b.Stage == s.ID }):
				sr.State = "blocked"
			case r.Stage == s.ID && r.Attempts[s.ID] > r.RoundStart[s.ID]:
				sr.State = "attempted"
			case r.Stage == s.ID:
				sr.State = "pending"
			case slices.Contains(r.Completed, s.ID):
				sr.State = "completed"
			}
			if sr.Attempts == nil {
				sr.Attempts = []Attempt{}
			}
			for _, a := range sr.Attempts {
				u := rep.Usage[s.Role]
				u.ModelTurns, u.Tokens, u.CostUSD = u.ModelTurns+a.Turns, u.Tokens+a.Tokens, u.CostUSD+a.CostUSD
				u.InputTokens, u.OutputTokens, u.ElapsedMs = u.InputTokens+a.InputTokens, u.OutputTokens+a.OutputTokens, u.ElapsedMs+a.ElapsedMs
				rep.Usage[s.Role] = u
				if a.Artifact != nil {
					rep.Artifacts = append(rep.Artifacts, ArtifactReport{a.Artifact.ID, a.Artifact.Path, string(a.Artifact.Digest), string(a.Artifact.FileDigest)})
				}
			}
			rep.Stages = append(rep.Stages, sr)
		}
		if s.Kind == KindGate {
			rep.Gates = append(rep.Gates, r.gateReport(s, stale))
		}
	}
	rep.Tickets = r.ticketReports(rep)
	rep.Delivery = r.deliveryReport(rep)
	r.setState(env, rep)
	if rep.State == StateBlocked {
		return rep, &BlockedError{RunID: r.ID, Blockers: rep.Blockers}
	}
	return rep, nil
}

// WriteText writes the report for a terminal.
func (rep *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "run: %s\nproject: %s\nstate: %s\nstage: %s\n", rep.RunID, rep.Project, rep.State, rep.Stage)
	rep.writeState(w)
	if rep.Branch != "" {
		fmt.Fprintf(w, "delivery branch: %s\n", rep.Branch)
	}
	if sb := rep.Sandbox; sb.Sandboxed {
		fmt.Fprintf(w, "sandbox: approved commands run in the OS sandbox (%s): %s; %s\n", strings.Join(sb.Covers, ", "), sb.Confines, sb)
	} else {
		fmt.Fprintf(w, "sandbox: none: approved commands run unsandboxed (rein run next --sandbox records the sandbox for the rest of the run)\n")
	}
	for _, st := range slices.Sorted(maps.Keys(rep.Attempts)) {
		fmt.Fprintf(w, "attempts: %s %d\n", st, rep.Attempts[st])
	}
	for _, s := range rep.Stages {
		fmt.Fprintf(w, "stage: %s %s (%d attempt(s))\n", s.Stage, s.State, len(s.Attempts))
		for _, a := range s.Attempts {
			fmt.Fprintf(w, "  attempt %d: %s", a.Attempt, a.Outcome)
			if c := a.FailureCause(); c != nil {
				fmt.Fprintf(w, " %s", c)
			} else if a.Reason != "" {
				fmt.Fprintf(w, " %s", a.Reason)
			}
			if a.Artifact != nil {
				fmt.Fprintf(w, " artifact %s digest %s", a.Artifact.Path, a.Artifact.Digest)
			}
			fmt.Fprintf(w, " turns %d session %s@%d %s\n", a.Turns, a.Session.ID, a.Session.Seq, a.Session.Hash)
		}
	}
	for _, g := range rep.Gates {
		d := g.Digest
		if d == "" {
			d = "-"
		}
		by := ""
		if g.By != "" {
			by = " by " + g.By
		}
		fmt.Fprintf(w, "gate: %s (%s) %s %s%s\n", g.Gate, g.Stage, g.State, d, by)
		if g.Detail != "" {
			fmt.Fprintf(w, "  %s\n", g.Detail)
		}
	}
	for _, a := range rep.Artifacts {
		fmt.Fprintf(w, "artifact: %s %s digest %s fileDigest %s\n", a.ID, a.Path, a.Digest, a.FileDigest)
	}
	if l := rep.Locked; l != nil {
		fmt.Fprintf(w, "locked harness: %s %s\n", l.Harness.Version, l.Harness.BinaryDigest)
		fmt.Fprintf(w, "locked workflow: %s v%d %s\n", l.Workflow.ID, l.Workflow.Version, l.Workflow.Digest)
		fmt.Fprintf(w, "locked profile: %s\n", l.ProfileDigest)
		fmt.Fprintf(w, "locked schema: run v%d, artifact normalization v%d\n", l.RunSchemaVersion, l.ArtifactSchemaVersion)
		for _, g := range l.Guidance {
			fmt.Fprintf(w, "locked guidance: %s %s\n", g.Path, g.Digest)
		}
		for _, s := range l.Skills {
			stages := "no stage"
			if len(s.Stages) > 0 {
				stages = "stages " + strings.Join(s.Stages, ",")
			}
			fmt.Fprintf(w, "locked skill: %s@%s %s %s (%s)\n", s.Name, s.Revision, s.Path, s.TreeDigest, stages)
		}
		for _, role := range Roles {
			m := l.Models[role]
			fmt.Fprintf(w, "locked model: %s %s/%s thinking %s budget %d turns %d tokens %s\n", role, m.Provider, m.Model, orDash(m.Thinking), m.Budget.ModelTurns, m.Budget.Tokens, m.Budget.Elapsed)
		}
	}
	for _, role := range Roles {
		u := rep.Usage[role]
		fmt.Fprintf(w, "usage: %s %d turns %d tokens (%d in, %d out) $%.4f %s elapsed\n", role, u.ModelTurns, u.Tokens, u.InputTokens, u.OutputTokens, u.CostUSD, time.Duration(u.ElapsedMs)*time.Millisecond)
	}
	for _, g := range rep.Gaps {
		kind := "optional"
		if g.Required {
			kind = "required"
		}
		fmt.Fprintf(w, "gap: %s (%s, %s): %s\n", g.ID, kind, g.Source, g.Detail)
	}
	for _, s := range rep.Stale {
		fmt.Fprintf(w, "stale: %s\n", s)
	}
	WriteRelocks(w, rep.Relocks)
	rep.writeTickets(w)
	for _, b := range rep.Blockers {
		fmt.Fprintf(w, "blocker: %s (stage %s): %s\n", b.Code, b.Stage, b.Detail)
		for _, r := range b.Recovery {
			fmt.Fprintf(w, "  recovery: %s\n", r)
		}
	}
	fmt.Fprintf(w, "%s\n", rep.History)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
