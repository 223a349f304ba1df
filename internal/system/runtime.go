package system

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/llm/openai"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tool/grep"
	"github.com/reinhq/rein/internal/tool/shell"
)

// Options are the resolved inputs of a run.
type Options struct {
	Provider string
	Model    string
	BaseURL  string
	APIKey   string
	// Script is the scenario file of the script provider.
	Script string
	// Tools selects tools by name; nil means the default set. NoTools offers none.
	Tools   []string
	NoTools bool
	// Budgets.
	MaxTurns int
	MaxCost  float64
	// Dir is the workspace; Home is $REIN_HOME.
	Dir  string
	Home string
	// Getenv reads the environment (os.Getenv in production).
	Getenv func(string) string
	// Observe receives kernel events.
	Observe func(kernel.Event)
	// HTTPClient is used by network providers; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Retry overrides llm.DefaultRetryPolicy when MaxAttempts > 0.
	Retry llm.RetryPolicy
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Runtime is a built run: the agent plus what it owns.
type Runtime struct {
	Agent     *kernel.Agent
	Model     llm.ModelInfo
	Workspace *tool.Workspace
	Recorder  *kernel.Memory
	Tools     *tool.Set
	KeySource KeySource
}

// Close releases the workspace.
func (r *Runtime) Close() error { return r.Workspace.Close() }

// DefaultTools is the tool set offered when none is selected.
var DefaultTools = []string{"read", "write", "edit", "bash", "grep", "find", "ls"}

// Providers lists the provider names rein knows.
var Providers = []string{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderOpenAICompat, llm.ProviderScript}

// Build resolves o into a Runtime.
func Build(o Options) (*Runtime, error) {
	if o.Getenv == nil {
		return nil, errors.New("system: Options.Getenv is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	reg := llm.NewRegistry()
	if err := reg.LoadOverrides(filepath.Join(o.Home, "models.json")); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	provider, err := resolveProvider(o)
	if err != nil {
		return nil, err
	}
	modelID := o.Model
	if modelID == "" {
		modelID = llm.DefaultModel(provider)
	}
	if modelID == "" {
		return nil, fmt.Errorf("%w: provider %s has no default model; pass --model", ErrConfig, provider)
	}
	info, _ := reg.Lookup(provider, modelID)
	model, keySource, err := buildModel(o, provider, info)
	if err != nil {
		return nil, err
	}
	policy := llm.DefaultRetryPolicy
	if o.Retry.MaxAttempts > 0 {
		policy = o.Retry
	}
	model = llm.Retry(model, policy)

	ws, err := tool.OpenWorkspace(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	tools, err := buildTools(ws, o)
	if err != nil {
		ws.Close()
		return nil, err
	}
	var lines []contextpack.ToolLine
	for _, s := range tools.Specs() {
		lines = append(lines, contextpack.ToolLine{Name: s.Name, Snippet: s.Snippet})
	}
	rec := &kernel.Memory{}
	agent, err := kernel.New(kernel.Config{
		Model:     model,
		Tools:     tools,
		Recorder:  rec,
		System:    contextpack.SystemPrompt(contextpack.Prompt{Tools: lines, Dir: ws.Dir, Date: o.Now()}),
		MaxTurns:  o.MaxTurns,
		MaxCost:   o.MaxCost,
		MaxTokens: info.MaxOutput,
		Observe:   o.Observe,
		Now:       o.Now,
	})
	if err != nil {
		ws.Close()
		return nil, err
	}
	info.Provider = provider
	return &Runtime{Agent: agent, Model: info, Workspace: ws, Recorder: rec, Tools: tools, KeySource: keySource}, nil
}

func resolveProvider(o Options) (string, error) {
	p := o.Provider
	switch {
	case p != "":
	case o.Script != "":
		p = llm.ProviderScript
	case o.Getenv("ANTHROPIC_API_KEY") != "":
		p = llm.ProviderAnthropic
	case o.Getenv("OPENAI_API_KEY") != "":
		p = llm.ProviderOpenAI
	default:
		return "", fmt.Errorf("%w: no provider configured: pass --provider (%s) with a key, or --script FILE for the offline script model; `rein demo` runs without either",
			ErrConfig, strings.Join(Providers, ", "))
	}
	for _, known := range Providers {
		if p == known {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: unknown provider %q; known providers: %s", ErrConfig, p, strings.Join(Providers, ", "))
}

func buildModel(o Options, provider string, info llm.ModelInfo) (llm.Model, KeySource, error) {
	if provider == llm.ProviderScript {
		if o.Script == "" {
			return nil, KeyNone, fmt.Errorf("%w: the script provider needs --script FILE (see docs/script-format.md)", ErrConfig)
		}
		m, err := script.Load(o.Script)
		if err != nil {
			return nil, KeyNone, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		return m, KeyNone, nil
	}
	if o.Script != "" {
		return nil, KeyNone, fmt.Errorf("%w: --script is only for --provider script (got --provider %s)", ErrConfig, provider)
	}
	key, src, err := ResolveKey(o.Home, provider, o.APIKey, o.Getenv)
	if err != nil {
		return nil, KeyNone, err
	}
	baseURL := o.BaseURL
	if baseURL == "" {
		baseURL = info.BaseURL
	}
	client := o.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	switch provider {
	case llm.ProviderAnthropic:
		if key == "" {
			return nil, KeyNone, missingKey(provider)
		}
		return anthropic.New(anthropic.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput}), src, nil
	case llm.ProviderOpenAI:
		if key == "" {
			return nil, KeyNone, missingKey(provider)
		}
		api := info.API
		if api != llm.APIOpenAIChat {
			api = llm.APIOpenAIResponses
		}
		m, err := openai.New(openai.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput, API: api})
		if err != nil {
			return nil, KeyNone, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		return m, src, nil
	default: // openai-compat
		if baseURL == "" {
			return nil, KeyNone, fmt.Errorf("%w: --provider openai-compat needs --base-url (e.g. http://localhost:11434/v1 for ollama)", ErrConfig)
		}
		m, err := openaicompat.New(openaicompat.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput})
		if err != nil {
			return nil, KeyNone, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		return m, src, nil
	}
}

func missingKey(provider string) error {
	return fmt.Errorf("%w: no API key for %s: pass --api-key, set %s, or store one with `rein auth set %s`",
		ErrConfig, provider, EnvKey(provider), provider)
}

func buildTools(ws *tool.Workspace, o Options) (*tool.Set, error) {
	if o.NoTools {
		return tool.New()
	}
	all, err := tool.New(
		fstool.Read(ws), fstool.Write(ws), fstool.Edit(ws),
		shell.New(ws.Dir, shell.Options{}),
		grep.New(ws, grep.Options{}),
		fstool.Find(ws), fstool.Ls(ws),
	)
	if err != nil {
		return nil, err
	}
	names := o.Tools
	if names == nil {
		names = DefaultTools
	}
	set, err := all.Select(names)
	if err != nil {
		return nil, fmt.Errorf("%w: --tools: %v", ErrConfig, err)
	}
	return set, nil
}
