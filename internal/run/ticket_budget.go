package run

import (
	"context"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
)

// liveSession is what a ticket attempt's session has spent so far, while it runs: the model
// turns reserved for it, the tokens of its finished turns and when it started. The tickets
// of a batch that run at the same time share their role's budget through these: what a role
// has left is its budget less its settled attempts (Run.StageAttempts) less its live
// sessions, read and reserved under ticketState.mu.
type liveSession struct {
	role    string
	start   time.Time
	turns   int
	tokens  int
	refused bool // the reservation refused a turn: the kernel counted it, no model call was made
}

// lockTickets takes the lock of the state the tickets of a batch share (StageAttempts,
// Blockers, the live sessions) and returns its release.
func (r *Run) lockTickets() func() {
	r.Tickets.mu.Lock()
	return r.Tickets.mu.Unlock
}

// ticketBudget is what remains of a ticket role's budget for a new attempt: the role's budget
// less its settled attempts and the sessions of the role still running.
func (r *Run) ticketBudget(env Env, role string) budgetLeft {
	defer r.lockTickets()()
	return r.ticketBudgetLocked(env, role)
}

func (r *Run) ticketBudgetLocked(env Env, role string) budgetLeft {
	turns, tokens, elapsed := r.roleUsed(role)
	now := env.now()
	for _, s := range r.Tickets.live {
		if s.role == role {
			turns, tokens, elapsed = turns+s.turns, tokens+s.tokens, elapsed+now.Sub(s.start)
		}
	}
	return budgetOf(r.Lock.Models[role], turns, tokens, elapsed)
}

// beginLive registers session sid of role as running from now.
func (r *Run) beginLive(env Env, role, sid string) {
	defer r.lockTickets()()
	if r.Tickets.live == nil {
		r.Tickets.live = map[string]*liveSession{}
	}
	r.Tickets.live[sid] = &liveSession{role: role, start: env.now()}
}

// noteTicketAttempt adds a settled ticket attempt to the role's spending and ends its live
// session, in one step: what the session spent is counted exactly once at every moment.
func (r *Run) noteTicketAttempt(a TicketAttempt) {
	defer r.lockTickets()()
	r.StageAttempts[a.Stage] = append(r.StageAttempts[a.Stage], a.Attempt)
	delete(r.Tickets.live, a.Session.ID)
}

// liveRefused reports whether the shared reservation refused a turn of session sid.
func (r *Run) liveRefused(sid string) bool {
	defer r.lockTickets()()
	s := r.Tickets.live[sid]
	return s != nil && s.refused
}

// turnReservation is the context hook that reserves each model turn of a ticket session
// from its role's shared budget before the turn starts: one model turn, atomically across
// every ticket running at the same time, so that together they never use more turns than
// the budget; tokens and elapsed time are checked against what every session of the role
// has used so far (the kernel's own rule for one session). A turn the budget cannot pay
// for does not start: the session ends with a *kernel.BudgetError, as when its own limit
// is reached.
type turnReservation struct {
	r    *Run
	env  Env
	sid  string
	role string
}

func (h turnReservation) Context(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	defer h.r.lockTickets()()
	s := h.r.Tickets.live[h.sid]
	if s == nil {
		return msgs, nil
	}
	s.tokens = usedTokens(msgs)
	left := h.r.ticketBudgetLocked(h.env, h.role)
	pol := h.r.Lock.Models[h.role]
	var refusal *kernel.BudgetError
	switch {
	case left.turns < 1:
		refusal = &kernel.BudgetError{Budget: "turns", Limit: float64(pol.Budget.ModelTurns), Used: float64(pol.Budget.ModelTurns - left.turns)}
	case left.tokens <= 0:
		refusal = &kernel.BudgetError{Budget: "tokens", Limit: float64(pol.Budget.Tokens), Used: float64(pol.Budget.Tokens - left.tokens)}
	case left.elapsed <= 0:
		refusal = &kernel.BudgetError{Budget: "elapsed"}
	}
	if refusal != nil {
		s.refused = true
		return nil, refusal
	}
	s.turns++
	return msgs, nil
}

// usedTokens sums the usage of the assistant messages of a session's context: the tokens of
// its finished turns.
func usedTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant && m.Usage != nil {
			n += m.Usage.Input + m.Usage.Output + m.Usage.CacheRead + m.Usage.CacheWrite
		}
	}
	return n
}
