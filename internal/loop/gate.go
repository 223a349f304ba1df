package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// CodeHumanGate is the refusal code of a call the loop's human gate holds.
const CodeHumanGate refusal.Code = "loop_human_gate"

// classRules returns the bash command patterns (internal/policy syntax) of an action class. The
// permission engine's shell analysis applies: commands inside bash -c, eval, env, sudo,
// xargs, pipelines and substitutions are found as well.
func classRules(class string) []string {
	switch class {
	case ClassPush:
		return []string{"git push *", "git -C * push *"}
	case ClassRelease:
		return []string{"gh release *", "npm publish *", "cargo publish *", "twine upload *", "goreleaser *", "docker push *", "git push * --tags *", "git tag *"}
	case ClassDelete:
		return []string{"rm *", "rmdir *", "unlink *", "git rm *", "git clean *", "shred *"}
	case ClassProductionWrite:
		return []string{"kubectl *", "terraform apply *", "terraform destroy *", "helm *", "psql *", "mysql *"}
	case ClassOutgoingMessage:
		return []string{"curl *", "wget *", "mail *", "sendmail *", "ssh *", "scp *", "gh issue *", "gh pr *", "gh api *"}
	case ClassPrivilegeChange:
		return []string{"sudo *", "doas *", "su *", "chmod *", "chown *", "chgrp *", "setcap *", "usermod *", "passwd *"}
	}
	return nil
}

// GateRequest is an action a round attempted that needs a person: the call it was, never run.
type GateRequest struct {
	ID    string          `json:"id"`
	Round int             `json:"round"`
	Class string          `json:"class"`
	Tool  string          `json:"tool"`
	Args  json.RawMessage `json:"args"`
	Part  string          `json:"part"` // the simple command or path the class matched
	Rule  string          `json:"rule"`
}

// humanGate is the kernel gate of a round (agentspec.Spec.Gate): it holds every call of a
// human_gate.required_for class before it runs.
type humanGate struct {
	pol     *policy.Policy
	classOf map[string]string // rule as written → class
	custom  map[string]bool   // custom command names
	round   int

	mu   sync.Mutex
	held []GateRequest
}

// newHumanGate compiles required_for into ask rules over the permission engine.
func newHumanGate(requiredFor []string, workspace string, round int) (*humanGate, error) {
	g := &humanGate{classOf: map[string]string{}, custom: map[string]bool{}, round: round}
	var ask []string
	for _, class := range requiredFor {
		pats := classRules(class)
		if pats == nil { // a custom command name: the program a bash line runs
			pats = []string{class + " *"}
			g.custom[class] = true
		}
		for _, p := range pats {
			r := "bash(" + p + ")"
			ask = append(ask, r)
			g.classOf[r] = class
		}
	}
	pol, err := policy.New(policy.Config{Rules: policy.Rules{Ask: ask}, Protected: []string{}, Dir: workspace})
	if err != nil {
		return nil, fmt.Errorf("loop human gate: %w", err)
	}
	g.pol = pol
	return g, nil
}

// Check implements kernel.Gate.
func (g *humanGate) Check(_ context.Context, call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
	d := g.pol.Decide(spec.Name, args)
	class := ""
	if d.Verdict == policy.Ask {
		class = g.classOf[d.Rule]
	}
	// A round is never offered run_command (TestGateHoldsOnlyBashLines); should one be, a call
	// of a custom id is held all the same, and approve refuses to run it (fail closed).
	if spec.Name == policy.ToolRunCommand {
		var a struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(args, &a) == nil && g.custom[a.ID] {
			class, d.Part = a.ID, a.ID
		}
	}
	if class == "" {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	req := GateRequest{ID: fmt.Sprintf("g%d-%d", g.round, len(g.held)+1), Round: g.round, Class: class, Tool: spec.Name, Args: append(json.RawMessage(nil), args...), Part: d.Part, Rule: d.Rule}
	g.held = append(g.held, req)
	return &refusal.Error{Code: CodeHumanGate, Message: fmt.Sprintf(
		"%s is a %s action, which this loop's contract sends to a person (human gate %s): it was NOT run. Do not retry it or work around it; finish this round's other work and report — the loop waits for the approval and runs the action itself once approved",
		strings.TrimSpace(d.Part), class, req.ID)}
}

// requests returns the calls held so far.
func (g *humanGate) requests() []GateRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GateRequest(nil), g.held...)
}
