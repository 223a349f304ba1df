package schedule

import (
	"fmt"
	"strings"
	"time"
)

// BlockBudgetInsufficient is the blocker of a run whose remaining budgets cannot pay for the
// planned ticket attempts.
const BlockBudgetInsufficient = "run_budget_insufficient"

// Budget is an amount of one role's budget.
type Budget struct {
	ModelTurns int
	Tokens     int
	Elapsed    time.Duration
}

// Roles holds a budget for each ticket role.
type Roles struct {
	Writer, Review Budget
}

// Attempts are the attempts planned for one ticket.
type Attempts struct {
	Ticket         string
	Writer, Review int
}

// Cover is one role's side of the decision.
type Cover struct {
	Attempts  int    // planned attempts, summed over the tickets
	Need      Budget // Attempts times the role's per-attempt minimum
	Remaining Budget
	// Short names the dimensions where Need exceeds Remaining: "modelTurns", "tokens",
	// "elapsed".
	Short []string
}

// FanOut is the decision of [CheckFanOut].
type FanOut struct {
	Covered        bool
	Writer, Review Cover
}

// CheckFanOut decides whether the remaining budgets cover the planned attempts, each
// costing at least perAttempt of its role. A dimension whose per-attempt minimum is zero is
// not checked. A negative number of attempts is an error.
func CheckFanOut(remaining, perAttempt Roles, planned []Attempts) (FanOut, error) {
	var w, r int
	for _, a := range planned {
		if a.Writer < 0 || a.Review < 0 {
			return FanOut{}, fmt.Errorf("schedule: ticket %q plans %d writer and %d review attempts; attempts cannot be negative", a.Ticket, a.Writer, a.Review)
		}
		w += a.Writer
		r += a.Review
	}
	f := FanOut{Writer: cover(w, perAttempt.Writer, remaining.Writer), Review: cover(r, perAttempt.Review, remaining.Review)}
	f.Covered = len(f.Writer.Short) == 0 && len(f.Review.Short) == 0
	return f, nil
}

func cover(attempts int, per, remaining Budget) Cover {
	c := Cover{Attempts: attempts, Remaining: remaining, Need: Budget{
		ModelTurns: attempts * per.ModelTurns, Tokens: attempts * per.Tokens, Elapsed: time.Duration(attempts) * per.Elapsed}}
	if per.ModelTurns > 0 && c.Need.ModelTurns > remaining.ModelTurns {
		c.Short = append(c.Short, "modelTurns")
	}
	if per.Tokens > 0 && c.Need.Tokens > remaining.Tokens {
		c.Short = append(c.Short, "tokens")
	}
	if per.Elapsed > 0 && c.Need.Elapsed > remaining.Elapsed {
		c.Short = append(c.Short, "elapsed")
	}
	return c
}

// Detail states the decision with its numbers, for a blocker or a status line.
func (f FanOut) Detail() string {
	var b strings.Builder
	for i, role := range []struct {
		name string
		c    Cover
	}{{"writer", f.Writer}, {"review", f.Review}} {
		if i > 0 {
			b.WriteString("; ")
		}
		c := role.c
		fmt.Fprintf(&b, "%s: %d attempt(s) need %d model turns, %d tokens, %s; %d, %d, %s remain",
			role.name, c.Attempts, c.Need.ModelTurns, c.Need.Tokens, c.Need.Elapsed, c.Remaining.ModelTurns, c.Remaining.Tokens, c.Remaining.Elapsed)
		if len(c.Short) > 0 {
			fmt.Fprintf(&b, " (short of %s)", strings.Join(c.Short, ", "))
		}
	}
	return b.String()
}
