package run

import (
	"context"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// clarifyScenario's research leaves one required unknown, so the run stops at Clarification.
const clarifyScenario = `version: 1
turns:
  - calls:
      - name: rein_stage_result
        args:
          stage: research
          establishedEvidence: [{id: e1, statement: The requirement asks for a thing., references: [requirement]}]
          remainingUnknowns: [{id: u1, description: "Which variant is wanted?", required: true}]
          requiredEvidenceUnavailable: []
          clarificationQuestions: [{id: q1, question: "Which variant is wanted?", unknownIds: [u1]}]
  - text: Submitted.
`

// TestResumeAfterCrashClarify SIGKILLs `rein run clarify` after the answers artifact is written
// and before its ledger record; resume records the answers exactly once and the run moves on.
func TestResumeAfterCrashClarify(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		return script.Parse([]byte(clarifyScenario), "scenario.yaml")
	})
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	if st, err := Status(env, id); err != nil || st.Stage != StageClarification {
		t.Fatalf("status before the crash = %+v, %v", st, err)
	}
	crashChild(t, "REIN_RUN_CRASH_HOME="+env.Home, "REIN_RUN_CRASH_ID="+id, "REIN_RUN_CRASH_AT=hook:clarification", "REIN_RUN_CRASH_OP=clarify")
	if n := countKind(t, env, id, KindClarified, ""); n != 0 {
		t.Fatalf("the crash left %d clarification records; want 0 (killed before the record)", n)
	}
	res, err := Resume(context.Background(), env, id)
	if err != nil || len(res.Settled) != 1 || res.Settled[0].Outcome != "answered" {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	settleTwice(t, env, id)
	st, err := Status(env, id)
	if err != nil || st.Stage != StageSpecification {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if n := countKind(t, env, id, KindClarified, ""); n != 1 {
		t.Fatalf("%d clarification records, want exactly 1", n)
	}
}
