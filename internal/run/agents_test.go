package run

import (
	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
)

// testAgents is the composition root's agent factory, as rein wires it, with each stage's
// model built by f (nil: from the policy's provider — the script provider's scenario file).
// Retries are off so that a scripted failure fails at once.
func testAgents(home string, f func(project string, p ModelPolicy) (llm.Model, error)) *system.Agents {
	a := &system.Agents{Home: home, Getenv: func(string) string { return "" }, Retry: llm.RetryPolicy{MaxAttempts: 1}}
	if f != nil {
		a.NewModel = func(ws string, m agentspec.Model) (llm.Model, error) {
			return f(ws, ModelPolicy{Provider: m.Provider, Model: m.Model, BaseURL: m.BaseURL, Script: m.Script, Thinking: string(m.Thinking)})
		}
	}
	return a
}
