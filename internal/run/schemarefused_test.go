package run

import (
	"context"
	"errors"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// schemaInvalidScenario submits a contract the tool's schema refuses before the tool runs: an
// unknown key and a missing one.
const schemaInvalidScenario = `version: 1
turns:
  - calls:
      - name: rein_stage_result
        args:
          stage: research
          verdict: done
          establishedEvidence: [{id: e1, statement: A fact., references: [requirement]}]
          requiredEvidenceUnavailable: []
          clarificationQuestions: []
  - text: I give up.
`

// TestSchemaRefusedSubmissionIsContractInvalid: a submission the kernel refuses against the
// contract tool's schema (it never reaches the tool's Run) still counts as a refused contract —
// cause contract_invalid with the contract's own codes — not as a missing one.
func TestSchemaRefusedSubmissionIsContractInvalid(t *testing.T) {
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		return script.Parse([]byte(schemaInvalidScenario), "schema.yaml")
	})
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrBlocked) {
		t.Fatalf("next = %v; want blocked after the attempts", err)
	}
	rep, _ := statusText(t, env, id)
	for _, a := range rep.Stages[0].Attempts {
		c := a.Cause
		if c == nil || c.Code != CauseContractInvalid || c.Problems["contract_unknown_key"] != 1 || c.Problems["contract_missing_field"] != 1 {
			t.Fatalf("attempt %d cause = %+v; want contract_invalid with contract_unknown_key and contract_missing_field", a.Attempt, c)
		}
	}
}
