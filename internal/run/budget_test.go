package run

import (
	"context"
	"errors"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// greedyScenario spends more tokens in its first turn than any role's default budget.
const greedyScenario = `version: 1
turns:
  - calls: [{name: ls, args: {}}]
    usage: {input: 900000, output: 10}
  - text: never reached
`

// TestTokenBudgetExhausted: an attempt that spends the role's tokens is stopped before its
// next model call (reason budget_exhausted, tokens recorded) and the run blocks with
// run_budget_exhausted without starting another attempt.
func TestTokenBudgetExhausted(t *testing.T) {
	env, id := startRun(t)
	calls := 0
	env.Agents = testAgents(env.Home, func(_ string, p ModelPolicy) (llm.Model, error) {
		calls++
		return script.Parse([]byte(greedyScenario), "scenario.yaml")
	})
	_, err := Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || be.Blockers[0].Code != BlockBudgetExhausted {
		t.Fatalf("next = %v, want %s", err, BlockBudgetExhausted)
	}
	if calls != 1 {
		t.Fatalf("%d attempts, want 1", calls)
	}
	wantBlocker(t, env, id, BlockBudgetExhausted)
	rep, _ := Status(env, id)
	var a Attempt
	for _, s := range rep.Stages {
		if s.Stage == StageResearch && len(s.Attempts) == 1 {
			a = s.Attempts[0]
		}
	}
	if a.Reason != ReasonBudgetExhausted || a.Turns != 1 || a.InputTokens != 900000 || a.OutputTokens != 10 || a.Tokens != 900010 {
		t.Fatalf("attempt = %+v", a)
	}
	if u := rep.Usage[RoleWorkflow]; u.Tokens != 900010 || u.InputTokens != 900000 || u.OutputTokens != 10 {
		t.Fatalf("usage = %+v", u)
	}
}
