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
	Stage string `json:"stage"`
	State string `json:"state"`
	TicketSummary
	Writers       []TicketAttempt      `json:"writers"`
	Reviews       []TicketAttempt      `json:"reviews"`
	Verifications []TicketVerification `json:"verifications"`
	Accepted      *TicketAccepted      `json:"accepted,omitempty"`
	Tokens        int                  `json:"tokens"`
	CostUSD       float64              `json:"costUsd"`
}

// TicketSummary is what status and metrics both say of a ticket, from its ledger records
// alone: its attempts, the models that wrote and reviewed it, the findings of its reviews
// and the outcomes of its verifications.
type TicketSummary struct {
	// Attempts is the number of writer attempts started (an open one included).
	Attempts int `json:"attempts"`
	// WriterModels and ReviewModels are the models ("provider/model") of its writer and
	// review attempts, in the order first used.
	WriterModels []string `json:"writerModels"`
	ReviewModels []string `json:"reviewModels"`
	// Findings sums the findings of its settled reviews (a void review counts none).
	Findings Findings `json:"findings"`
	// Verification counts its verifications in a clean checkout.
	Verification VerificationCounts `json:"verification"`
}

// Findings counts review findings.
type Findings struct {
	Blocking int `json:"blocking"`
	Advisory int `json:"advisory"`
}

// VerificationCounts counts verifications by outcome; Last is the latest one's ("passed",
// "failed", or "" when none ran).
type VerificationCounts struct {
	Passed int    `json:"passed"`
	Failed int    `json:"failed"`
	Last   string `json:"last"`
}

// summary is ticket t's TicketSummary.
func (t *ticketRun) summary() TicketSummary {
	s := TicketSummary{Attempts: t.writerAttempts(), WriterModels: t.writerModels(), ReviewModels: []string{}}
	if s.WriterModels == nil {
		s.WriterModels = []string{}
	}
	for _, rv := range t.Reviews {
		if !slices.Contains(s.ReviewModels, rv.Model) {
			s.ReviewModels = append(s.ReviewModels, rv.Model)
		}
		if rv.Outcome == "accepted" {
			s.Findings.Blocking, s.Findings.Advisory = s.Findings.Blocking+rv.Blocking, s.Findings.Advisory+rv.Advisory
		}
	}
	if o := t.OpenReview; o != nil && !slices.Contains(s.ReviewModels, o.Model) {
		s.ReviewModels = append(s.ReviewModels, o.Model)
	}
	for _, v := range t.Verifications {
		s.Verification.Last = "failed"
		if v.Passed {
			s.Verification.Last = "passed"
		}
		if v.Passed {
			s.Verification.Passed++
		} else {
			s.Verification.Failed++
		}
	}
	return s
}

// ticketStateOf is ticket t's state: accepted, blocked (a blocker names it), running (an
// attempt's session is open) or pending.
func ticketStateOf(t *ticketRun, blockers []Blocker) string {
	switch {
	case t.Accepted != nil:
		return "accepted"
	case slices.ContainsFunc(blockers, func(b Blocker) bool { return b.blocksTicket(t.ID) }):
		return "blocked"
	case t.OpenWriter != nil || t.OpenReview != nil:
		return "running"
	}
	return "pending"
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
		tr := TicketReport{Ticket: id, Stage: r.ticketStage(id), State: ticketStateOf(t, rep.Blockers), TicketSummary: t.summary(),
			Writers: orEmpty(t.Writers), Reviews: orEmpty(t.Reviews), Verifications: t.Verifications, Accepted: t.Accepted}
		if tr.Verifications == nil {
			tr.Verifications = []TicketVerification{}
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
			t.Ticket, t.State, t.Stage, t.Attempts, len(t.Reviews), t.Tokens, t.CostUSD)
		t.TicketSummary.writeText(w, "  ")
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

// writeText writes the summary's line: models, findings, verifications.
func (s TicketSummary) writeText(w io.Writer, indent string) {
	last := ""
	if s.Verification.Last != "" {
		last = " (last " + s.Verification.Last + ")"
	}
	fmt.Fprintf(w, "%swriter models %s, review models %s, findings %d blocking %d advisory, verification %d passed %d failed%s\n", indent,
		modelsText(s.WriterModels), modelsText(s.ReviewModels), s.Findings.Blocking, s.Findings.Advisory, s.Verification.Passed, s.Verification.Failed, last)
}

func modelsText(ms []string) string {
	if len(ms) == 0 {
		return "-"
	}
	return strings.Join(ms, " ")
}

// blocksTicket reports whether b was recorded for ticket id: its Ticket field names it. A
// blocker without one is run-level — except one read from a record older than the field
// (legacy), which named its ticket only in its detail text ("ticket ID " or "ticket ID's").
func (b Blocker) blocksTicket(id string) bool {
	if b.Ticket != "" || !b.legacy {
		return b.Ticket == id
	}
	return strings.Contains(b.Detail, "ticket "+id+" ") || strings.Contains(b.Detail, "ticket "+id+"'s")
}
