package run

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// TicketReport is one ticket's line in status: its per-ticket stage and state, its writer
// and review attempts (models, findings), its verifications and what it spent.
type TicketReport struct {
	Ticket string `json:"ticket"`
	// Stage is the per-ticket stage it is in (ticket-execution … ticket-acceptance); State
	// pending, running (an attempt's session is open), accepted or blocked.
	Stage         string               `json:"stage"`
	State         string               `json:"state"`
	Writers       []TicketAttempt      `json:"writers"`
	Reviews       []TicketAttempt      `json:"reviews"`
	Verifications []TicketVerification `json:"verifications"`
	Accepted      *TicketAccepted      `json:"accepted,omitempty"`
	Tokens        int                  `json:"tokens"`
	CostUSD       float64              `json:"costUsd"`
}

// ticketReports reports every ticket of the schedule, in schedule order, and adds what the
// ticket attempts spent to usage.
func (r *Run) ticketReports(rep *Report) []TicketReport {
	s := r.Tickets.Schedule
	if s == nil {
		return []TicketReport{}
	}
	out := []TicketReport{}
	for _, id := range slices.Concat(s.Batches...) {
		t := r.Tickets.get(id)
		tr := TicketReport{Ticket: id, Stage: r.ticketStage(id), State: "pending", Writers: orEmpty(t.Writers), Reviews: orEmpty(t.Reviews),
			Verifications: t.Verifications, Accepted: t.Accepted}
		if tr.Verifications == nil {
			tr.Verifications = []TicketVerification{}
		}
		switch {
		case t.Accepted != nil:
			tr.State = "accepted"
		case slices.ContainsFunc(rep.Blockers, func(b Blocker) bool {
			return strings.Contains(b.Detail, "ticket "+id+" ") || strings.Contains(b.Detail, "ticket "+id+"'s")
		}):
			tr.State = "blocked"
		case t.OpenWriter != nil || t.OpenReview != nil:
			tr.State = "running"
		}
		for _, a := range slices.Concat(t.Writers, t.Reviews) {
			tr.Tokens, tr.CostUSD = tr.Tokens+a.Tokens, tr.CostUSD+a.CostUSD
			role := RoleWriter
			if a.Stage == StageTicketReview {
				role = RoleReview
			}
			u := rep.Usage[role]
			u.ModelTurns, u.Tokens, u.CostUSD = u.ModelTurns+a.Turns, u.Tokens+a.Tokens, u.CostUSD+a.CostUSD
			u.InputTokens, u.OutputTokens, u.ElapsedMs = u.InputTokens+a.InputTokens, u.OutputTokens+a.OutputTokens, u.ElapsedMs+a.ElapsedMs
			rep.Usage[role] = u
		}
		out = append(out, tr)
	}
	return out
}

func orEmpty(as []TicketAttempt) []TicketAttempt {
	if as == nil {
		return []TicketAttempt{}
	}
	return as
}

// writeTickets writes the per-ticket lines of status.
func (rep *Report) writeTickets(w io.Writer) {
	for _, t := range rep.Tickets {
		fmt.Fprintf(w, "ticket: %s %s (%s), %d writer attempt(s), %d review(s), %d token(s) $%.4f\n",
			t.Ticket, t.State, t.Stage, len(t.Writers), len(t.Reviews), t.Tokens, t.CostUSD)
		for _, a := range t.Writers {
			fmt.Fprintf(w, "  writer %d: %s%s model %s%s%s\n", a.Attempt.Attempt, a.Outcome, reasonText(a.Attempt), a.Model, orText(" candidate ", a.Candidate), refusalText(a.Refusals))
		}
		for _, a := range t.Reviews {
			fmt.Fprintf(w, "  review %d: %s%s model %s findings %d blocking %d advisory%s\n", a.Attempt.Attempt, a.Outcome, reasonText(a.Attempt), a.Model, a.Blocking, a.Advisory, refusalText(a.Refusals))
		}
		for _, v := range t.Verifications {
			var res []string
			for _, c := range v.Results {
				res = append(res, fmt.Sprintf("%s exit %d", c.ID, c.ExitCode))
			}
			fmt.Fprintf(w, "  verification of attempt %d: passed %t (%s) %s\n", v.Attempt, v.Passed, strings.Join(res, ", "), v.Artifact.Path)
		}
		if a := t.Accepted; a != nil {
			fmt.Fprintf(w, "  accepted: attempt %d commit %s candidate %s\n", a.Attempt, a.Candidate.Head, a.Candidate.Digest)
		}
	}
}

func reasonText(a Attempt) string {
	if c := a.FailureCause(); c != nil {
		return " " + c.String()
	}
	return orText(" ", a.Reason)
}

func orText(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func refusalText(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " refused " + strings.Join(parts, ", ")
}
