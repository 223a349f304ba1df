package loop

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/tool"
)

// TestGateHoldsOnlyBashLines: a round is never offered run_command, and the human gate —
// every class and a custom id compiled — holds bash lines only, so approve (which runs a
// held bash line with bash -c) covers every call a loop can hold.
func TestGateHoldsOnlyBashLines(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"gate": "[push, release, delete, production_write, outgoing_message, privilege_change, deploy]"}),
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	var offered []string
	ag := f.env.Agents.(*system.Agents)
	inner := ag.NewModel
	ag.NewModel = func(ws string, m agentspec.Model) (llm.Model, error) {
		mod, err := inner(ws, m)
		if err != nil {
			return nil, err
		}
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			if offered == nil {
				for _, s := range req.Tools {
					offered = append(offered, s.Name)
				}
			}
			return mod.Stream(ctx, req, emit)
		}), nil
	}
	f.run(f.start(), StateCompleted, ReasonVerificationPassed)
	t.Logf("a round offers %v", offered)
	if !slices.Contains(offered, policy.ToolBash) || slices.Contains(offered, policy.ToolRunCommand) {
		t.Fatalf("a round's tools %v: want bash and never run_command", offered)
	}

	g, err := newHumanGate([]string{ClassPush, ClassRelease, ClassDelete, ClassProductionWrite, ClassOutgoingMessage, ClassPrivilegeChange, "deploy"}, f.ws, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Arguments that every class would match were they a bash line.
	args := json.RawMessage(`{"command": "git push origin main && rm -rf x && deploy prod", "path": "rm x", "id": "deploy", "content": "git push"}`)
	for _, name := range append(slices.Clone(offered), "mcp__ops__deploy") {
		err := g.Check(context.Background(), &llm.ToolCall{Name: name}, tool.Spec{Name: name}, args)
		if held := err != nil; held != (name == policy.ToolBash) {
			t.Errorf("%s: held %t (%v); the gate holds bash lines only", name, held, err)
		}
	}
	for _, r := range g.requests() {
		if r.Tool != policy.ToolBash {
			t.Fatalf("held %+v", r)
		}
		if argv, err := actionArgv(r); err != nil || argv[0] != "bash" {
			t.Fatalf("approve would run %v (%v)", argv, err)
		}
	}
}
