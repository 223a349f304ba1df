package system

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/telemetry"
)

// Agents builds the agents a delivery run asks for (one per stage attempt, later writers and
// reviewers), each the one way [Build] builds every agent: the model in retries, the role's
// tool surface, the trust gate and settings, the permission gate, global hooks (and the
// project's when trusted), telemetry, and a fresh session with its lifecycle records. A stage
// agent gets the standard tools the spec names, briefly described (tool.Brief), and its read
// tools hold to the spec's read scope.
type Agents struct {
	Home   string
	Getenv func(string) string
	// Tracer traces every agent (--trace); nil traces nothing.
	Tracer *telemetry.Tracer
	// Trust, Confirm and Notice are as in [Options].
	Trust   TrustChoice
	Confirm func(question string) (bool, error)
	Notice  func(string)
	// HTTPClient is used by network providers and MCP servers; nil means rein's shared
	// provider client (predial.Client: it opens the provider's connection during Build) for
	// providers and http.DefaultClient for MCP servers.
	HTTPClient *http.Client
	// Retry overrides llm.DefaultRetryPolicy when MaxAttempts > 0.
	Retry llm.RetryPolicy
	// NewModel, when set, builds the model adapter of a spec instead of the provider's (a test
	// seam; the adapter still goes through retries, telemetry and the session).
	NewModel func(workspace string, m agentspec.Model) (llm.Model, error)
}

// Agent builds and opens the agent spec describes.
func (a *Agents) Agent(ctx context.Context, spec agentspec.Spec) (agentspec.Agent, error) {
	o := Options{
		Provider: spec.Model.Provider, Model: spec.Model.Model, BaseURL: spec.Model.BaseURL,
		Thinking: spec.Model.Thinking, Role: policy.Role(spec.Role), ExtraTools: spec.Tools,
		SystemPrompt: spec.System, ContextHooks: spec.ContextHooks, OnToolError: spec.OnToolError, Gate: spec.Gate, OnRequest: spec.OnRequest,
		MaxTurns: spec.MaxTurns, MaxUsageTokens: spec.MaxUsageTokens, Deadline: spec.Deadline,
		Dir: spec.Workspace, Home: a.Home, Getenv: a.Getenv, Tracer: a.Tracer, HTTPClient: a.HTTPClient,
		Retry: a.Retry, Now: spec.Now, LedgerFS: spec.LedgerFS, Trust: a.Trust, Confirm: a.Confirm, Notice: a.Notice,
		Session:    SessionChoice{Mode: SessionCreate, Ref: spec.SessionDir, ID: spec.SessionID},
		BriefTools: true, Reads: spec.Reads,
	}
	if spec.Standard != nil {
		o.Tools = slices.Clone(spec.Standard)
		for _, t := range spec.Tools {
			o.Tools = append(o.Tools, t.Spec().Name)
		}
	}
	if spec.Model.Script != "" {
		o.Script = spec.Model.Script
		if !filepath.IsAbs(o.Script) {
			o.Script = filepath.Join(spec.Workspace, filepath.FromSlash(o.Script))
		}
	}
	if a.NewModel != nil {
		m, err := a.NewModel(spec.Workspace, spec.Model)
		if err != nil {
			return nil, err
		}
		o.Adapter = m
	}
	return Open(ctx, o)
}
