package loop

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/reinhq/rein/internal/tool"
)

// ReportTool is the name of the tool a round reports with.
const ReportTool = "rein_loop_report"

// Claims a round may report; a claim is recorded, never trusted.
const (
	ClaimDone     = "done"
	ClaimProgress = "progress"
	ClaimStuck    = "stuck"
	ClaimNone     = "none"
)

// report is what the model says about its round.
type report struct {
	Claim     string   `json:"claim"`
	Summary   string   `json:"summary"`
	Decisions []string `json:"decisions,omitempty"`
	OpenItems []string `json:"openItems,omitempty"`
	NextStep  string   `json:"nextStep,omitempty"`
}

// reportTool takes the round's report (the last one counts).
type reportTool struct {
	mu  sync.Mutex
	got *report
}

func (t *reportTool) Spec() tool.Spec {
	return tool.Spec{
		Name:        ReportTool,
		Description: "Report this round: what you did, what is open and the next step. The claim is recorded; rein's own verification decides whether the loop is done.",
		Snippet:     ReportTool + ": report this round (claim, summary, open items, next step)",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["claim","summary"],"properties":{` +
			`"claim":{"type":"string","enum":["done","progress","stuck"]},"summary":{"type":"string","maxLength":2000},` +
			`"decisions":{"type":"array","items":{"type":"string","maxLength":500},"maxItems":20},` +
			`"openItems":{"type":"array","items":{"type":"string","maxLength":500},"maxItems":20},` +
			`"nextStep":{"type":"string","maxLength":1000}}}`),
		Sequential: true,
		Replay:     tool.ReplayNever,
	}
}

func (t *reportTool) Run(_ context.Context, call tool.Call) (tool.Result, error) {
	var r report
	if err := json.Unmarshal(call.Args, &r); err != nil {
		return tool.Result{}, err
	}
	t.mu.Lock()
	t.got = &r
	t.mu.Unlock()
	return tool.TextResult("Recorded. rein now runs the contract's verification itself; end the round."), nil
}

func (t *reportTool) result() report {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.got == nil {
		return report{Claim: ClaimNone}
	}
	return *t.got
}
