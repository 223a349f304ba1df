package run

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/reinhq/rein/internal/ledger"
)

// MetricsSchemaVersion is the version of `rein run metrics --json` ([Metrics]).
const MetricsSchemaVersion = 1

// Recovery categories of [Metrics].Recoveries.
const (
	RecoveryInterruptedAccepted = "interrupted_accepted" // an interrupted attempt resume proved accepted
	RecoveryInterruptedFailed   = "interrupted_failed"   // an interrupted attempt resume proved not accepted (retried)
	RecoveryBlockerLifted       = "blocker_lifted"       // a drift blocker lifted on evidence
	RecoveryLeaseTakenOver      = "lease_taken_over"     // the lease of a dead process taken over
	RecoveryProviderRetried     = "provider_retried"     // an attempt after one the provider failed
)

// Metrics is what `rein run metrics` reports: counts, sizes, tokens, costs and durations from
// the run ledger, per stage and per role — never a prompt, a message or an artifact's content.
type Metrics struct {
	SchemaVersion int            `json:"schemaVersion"`
	RunID         string         `json:"runId"`
	Stages        []StageMetrics `json:"stages"`
	Roles         []RoleMetrics  `json:"roles"`
	// Recoveries counts what the run recovered from, by category (Recovery*).
	Recoveries map[string]int `json:"recoveries"`
	// Blockers counts the blockers recorded in the run ledger, by code.
	Blockers map[string]int `json:"blockers"`
	// Tickets are the approved plan's tickets once the ticket stages began, in schedule
	// order, each with what its own attempts spent.
	Tickets []TicketMetrics `json:"tickets"`
}

// TicketMetrics are one ticket's numbers, from its ticket.* records: its state, the summary
// status shows, and its writer and review attempts summed as a stage's are.
type TicketMetrics struct {
	Ticket string `json:"ticket"`
	State  string `json:"state"`
	TicketSummary
	Writer  Counts  `json:"writer"`
	Review  Counts  `json:"review"`
	Tokens  int     `json:"tokens"`
	CostUSD float64 `json:"costUsd"`
}

// StageMetrics are one model stage's numbers.
type StageMetrics struct {
	Stage string `json:"stage"`
	Role  string `json:"role"`
	Counts
}

// RoleMetrics are one role's numbers over its stages.
type RoleMetrics struct {
	Role string `json:"role"`
	Counts
}

// Counts sums the settled attempts of a stage or a role.
type Counts struct {
	Attempts int `json:"attempts"`
	// Outcomes counts the attempts by outcome: accepted, or the failure cause (Cause* codes).
	Outcomes     map[string]int `json:"outcomes"`
	Turns        int            `json:"turns"`
	InputTokens  int            `json:"inputTokens"`
	OutputTokens int            `json:"outputTokens"`
	CostUSD      float64        `json:"costUsd"`
	ElapsedMs    int64          `json:"elapsedMs"`
	// RequestBytes, FixedBytes and PackBytes sum the attempts' first-request sizes (see
	// [Attempt]); an attempt settled by resume has none.
	RequestBytes int `json:"requestBytes"`
	FixedBytes   int `json:"fixedBytes"`
	PackBytes    int `json:"packBytes"`
	// Problems counts the refused submissions' contract problems by code.
	Problems map[string]int `json:"problems"`
}

func newCounts() Counts { return Counts{Outcomes: map[string]int{}, Problems: map[string]int{}} }

func (c *Counts) add(a Attempt) {
	c.Attempts++
	out := a.Outcome
	if cause := a.FailureCause(); cause != nil {
		out = cause.Code
		for code, n := range cause.Problems {
			c.Problems[code] += n
		}
	}
	c.Outcomes[out]++
	c.Turns += a.Turns
	c.InputTokens, c.OutputTokens, c.CostUSD = c.InputTokens+a.InputTokens, c.OutputTokens+a.OutputTokens, c.CostUSD+a.CostUSD
	c.ElapsedMs += a.ElapsedMs
	c.RequestBytes, c.FixedBytes, c.PackBytes = c.RequestBytes+a.RequestBytes, c.FixedBytes+a.FixedBytes, c.PackBytes+a.PackBytes
}

// RunMetrics reads run id's ledger (read-only, as [Status] does: it writes nothing anywhere)
// and sums its stage attempts, recoveries and blockers.
func RunMetrics(env Env, id string) (*Metrics, error) {
	r, l, err := openRunMode(env.Home, id, true)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	m := &Metrics{SchemaVersion: MetricsSchemaVersion, RunID: r.ID, Recoveries: map[string]int{}, Blockers: map[string]int{}}
	roles := map[string]*RoleMetrics{}
	for _, s := range DeliveryWorkflow().Stages {
		if s.Kind != KindModel {
			continue
		}
		sm := StageMetrics{Stage: s.ID, Role: s.Role, Counts: newCounts()}
		rm := roles[s.Role]
		if rm == nil {
			rm = &RoleMetrics{Role: s.Role, Counts: newCounts()}
			roles[s.Role] = rm
		}
		providerFailed := false
		for _, a := range r.StageAttempts[s.ID] {
			sm.add(a)
			rm.add(a)
			c := a.FailureCause()
			switch {
			case a.Reason == ReasonInterrupted && a.Outcome == "accepted":
				m.Recoveries[RecoveryInterruptedAccepted]++
			case c != nil && c.Code == CauseInterrupted:
				m.Recoveries[RecoveryInterruptedFailed]++
			}
			if providerFailed {
				m.Recoveries[RecoveryProviderRetried]++
			}
			providerFailed = c != nil && c.Code == CauseProviderUnavailable
		}
		m.Stages = append(m.Stages, sm)
	}
	for _, role := range Roles {
		if rm := roles[role]; rm != nil {
			m.Roles = append(m.Roles, *rm)
		}
	}
	if err := m.countRecords(r, l.Records()); err != nil {
		return nil, err
	}
	m.Tickets = r.ticketMetrics()
	return m, nil
}

// ticketMetrics sums each ticket's attempts, in schedule order.
func (r *Run) ticketMetrics() []TicketMetrics {
	out := []TicketMetrics{}
	if r.Tickets.Schedule == nil {
		return out
	}
	for _, id := range slices.Concat(r.Tickets.Schedule.Batches...) {
		t := r.Tickets.get(id)
		tm := TicketMetrics{Ticket: id, State: ticketStateOf(t, r.Blockers), TicketSummary: t.summary(), Writer: newCounts(), Review: newCounts()}
		for _, a := range t.Writers {
			tm.Writer.add(a.Attempt)
		}
		for _, a := range t.Reviews {
			tm.Review.add(a.Attempt)
		}
		tm.Tokens = tm.Writer.InputTokens + tm.Writer.OutputTokens + tm.Review.InputTokens + tm.Review.OutputTokens
		tm.CostUSD = tm.Writer.CostUSD + tm.Review.CostUSD
		out = append(out, tm)
	}
	return out
}

// countRecords counts the recoveries and blockers the ledger records outside the attempts.
func (m *Metrics) countRecords(r *Run, recs iter.Seq2[ledger.Record, error]) error {
	for rec, err := range recs {
		if err != nil {
			return fmt.Errorf("run %s: %w", r.ID, err)
		}
		switch rec.Kind {
		case KindBlockerLifted:
			m.Recoveries[RecoveryBlockerLifted]++
		case KindLeaseTakenOver:
			m.Recoveries[RecoveryLeaseTakenOver]++
		case KindBlocked:
			var b blockedBody
			if err := json.Unmarshal(rec.Body, &b); err != nil {
				return err
			}
			for _, bl := range b.Blockers {
				m.Blockers[bl.Code]++
			}
		}
	}
	return nil
}

// WriteText writes the metrics for a terminal.
func (m *Metrics) WriteText(w io.Writer) {
	fmt.Fprintf(w, "run: %s\n", m.RunID)
	for _, s := range m.Stages {
		fmt.Fprintf(w, "stage: %s (%s) ", s.Stage, s.Role)
		s.Counts.writeText(w)
	}
	for _, r := range m.Roles {
		fmt.Fprintf(w, "role: %s ", r.Role)
		r.Counts.writeText(w)
	}
	for _, k := range slices.Sorted(maps.Keys(m.Recoveries)) {
		fmt.Fprintf(w, "recovery: %s %d\n", k, m.Recoveries[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Blockers)) {
		fmt.Fprintf(w, "blocker: %s %d\n", k, m.Blockers[k])
	}
	for _, t := range m.Tickets {
		fmt.Fprintf(w, "ticket: %s %s, %d writer attempt(s), %d token(s) $%.4f\n", t.Ticket, t.State, t.Attempts, t.Tokens, t.CostUSD)
		t.TicketSummary.writeText(w, "  ")
		fmt.Fprint(w, "  writer: ")
		t.Writer.writeText(w)
		fmt.Fprint(w, "  review: ")
		t.Review.writeText(w)
	}
}

func (c Counts) writeText(w io.Writer) {
	fmt.Fprintf(w, "%d attempt(s), %d turns, %d tokens in, %d out, $%.4f, %s elapsed, request %d bytes (fixed %d), pack %d bytes\n",
		c.Attempts, c.Turns, c.InputTokens, c.OutputTokens, c.CostUSD, time.Duration(c.ElapsedMs)*time.Millisecond, c.RequestBytes, c.FixedBytes, c.PackBytes)
	for _, k := range slices.Sorted(maps.Keys(c.Outcomes)) {
		fmt.Fprintf(w, "  outcome: %s %d\n", k, c.Outcomes[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Problems)) {
		fmt.Fprintf(w, "  problem: %s %d\n", k, c.Problems[k])
	}
}
