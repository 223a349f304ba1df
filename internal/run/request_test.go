package run

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/run/contract"
)

// firstRequests runs a fresh run to the Ticket Plan Gate on the script model and returns the
// first request each model stage sent.
func firstRequests(t *testing.T) (string, map[string]*llm.Request) {
	t.Helper()
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	current := ""
	first := map[string]*llm.Request{}
	watchStages(&env, &current, func(stage string, req *llm.Request) {
		if first[stage] == nil {
			first[stage] = req
		}
	})
	advanceTo(t, env, id, StageTicketPlanGate, func(s string) { current = s })
	return id, first
}

// maxFixedOverhead bounds what every stage request carries besides its text: the system
// prompt and the tool schemas (the delivery-run design's (README, Delivery runs) goal: 4 KB).
const maxFixedOverhead = 4096

// TestStageRequestsBoundedAndSchemaOnce checks the first request of each model stage: it states
// the no-history rule and the input boundary, names rein_stage_result as the contract without
// repeating the contract's schema in its text, and its fixed overhead (system prompt and tool
// schemas) is at most maxFixedOverhead bytes. It logs the sizes (go test -v -run this test):
// the request, its fixed overhead and its pack.
func TestStageRequestsBoundedAndSchemaOnce(t *testing.T) {
	id, first := firstRequests(t)
	kinds := map[string]contract.Kind{StageResearch: contract.KindResearch,
		StageSpecification: contract.KindSpecification, StageTicketPlanning: contract.KindTicketPlanning}
	for _, s := range []string{StageResearch, StageSpecification, StageTicketPlanning} {
		req := first[s]
		if req == nil {
			t.Fatalf("%s sent no request", s)
		}
		text := req.Messages[len(req.Messages)-1].Text()
		if !strings.HasPrefix(text, RequestPrefix(id)+": stage "+s+", attempt 1.") {
			t.Fatalf("%s: the last message is not the stage request: %.200s", s, text)
		}
		for _, want := range []string{
			"- Do not use or reconstruct prior conversation history.",
			"- Treat only Artifact Pack references as established inputs.",
			"Submit with rein_stage_result (its parameters are the contract).",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s request lacks %q", s, want)
			}
		}
		c, err := contract.For(kinds[s])
		if err != nil {
			t.Fatal(err)
		}
		schema := c.Schema()
		var onTool bool
		for _, ts := range req.Tools {
			onTool = onTool || ts.Name == contract.ToolName && string(ts.Schema) == string(schema)
		}
		if !onTool {
			t.Errorf("%s: %s does not carry the contract's schema as its parameters", s, contract.ToolName)
		}
		if strings.Contains(text, string(schema)) || strings.Contains(text, `"$schema"`) || strings.Contains(text, `"properties"`) {
			t.Errorf("%s request text repeats the contract's schema", s)
		}
		tools, err := json.Marshal(req.Tools)
		if err != nil {
			t.Fatal(err)
		}
		pack := packSection(text)
		fixed := len(req.System) + len(tools)
		t.Logf("%s: request %d bytes = system %d + tool schemas %d (fixed %d) + text %d (pack %d)",
			s, fixed+len(text), len(req.System), len(tools), fixed, len(text), len(pack))
		if fixed > maxFixedOverhead {
			t.Errorf("%s: fixed overhead %d bytes (system %d, tool schemas %d), at most %d", s, fixed, len(req.System), len(tools), maxFixedOverhead)
		}
	}
}

// packSection is the request text's pack: from "## Pack" to the next section.
func packSection(text string) string {
	_, after, ok := strings.Cut(text, "## Pack\n")
	if !ok {
		return ""
	}
	pack, _, _ := strings.Cut(after, "\n## ")
	return pack
}
