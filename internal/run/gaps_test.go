package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
)

// TestRequiredGapMustBeAnswered starts a run whose delivery branch already exists (Preflight
// records the required gap branch-exists) and whose Research raises no unknown: Specification
// does not start until Clarification answers the gap, and the Specification and Ticket
// Planning requests carry the gap.
func TestRequiredGapMustBeAnswered(t *testing.T) {
	env0, first := startRun(t)
	rep, err := Status(env0, first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := git(rep.Project, "branch", "rein/existing"); err != nil {
		t.Fatal(err)
	}
	env := workflowEnv(env0.Home)
	id, err := Start(env, StartOptions{Project: rep.Project, Requirement: filepath.Join(rep.Project, "req.md"), Branch: "rein/existing"})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	current := ""
	texts := map[string]string{}
	watchStages(&env, &current, func(stage string, req *llm.Request) {
		if _, ok := texts[stage]; !ok {
			texts[stage] = req.Messages[len(req.Messages)-1].Text()
		}
	})
	current = StageResearch
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("research: %v", err)
	}
	_, err = Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Blockers) != 1 || be.Blockers[0].Code != BlockClarificationRequired ||
		!strings.Contains(be.Blockers[0].Detail, "branch-exists") {
		t.Fatalf("Next after research = %v, want %s naming branch-exists", err, BlockClarificationRequired)
	}
	if _, err := Clarify(env, id, map[string]string{"other": "x"}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "branch-exists") {
		t.Fatalf("clarify without the gap = %v, want a usage error naming branch-exists", err)
	}
	if _, err := Clarify(env, id, map[string]string{"branch-exists": "build on it"}); err != nil {
		t.Fatalf("clarify: %v", err)
	}
	advanceTo(t, env, id, StageTicketPlanGate, func(s string) { current = s })
	for _, s := range []string{StageResearch, StageSpecification, StageTicketPlanning} {
		if !strings.Contains(texts[s], "## Evidence gaps\n\n- branch-exists (required, from preflight)") {
			t.Errorf("%s request carries no evidence gaps:\n%.600s", s, texts[s])
		}
	}
}
