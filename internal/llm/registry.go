package llm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/reinhq/rein/internal/strictjson"
)

// API names a wire protocol.
const (
	APIAnthropicMessages = "anthropic-messages"
	APIOpenAIResponses   = "openai-responses"
	APIOpenAIChat        = "openai-completions"
	APIScript            = "script"
)

// Provider names.
const (
	ProviderAnthropic    = "anthropic"
	ProviderOpenAI       = "openai"
	ProviderOpenAICompat = "openai-compat"
	ProviderScript       = "script"
)

// Pricing is US dollars per million tokens.
type Pricing struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// ModelInfo is one registry entry.
type ModelInfo struct {
	ID            string  `json:"id"`
	Provider      string  `json:"provider"`
	API           string  `json:"api"`
	BaseURL       string  `json:"baseUrl,omitempty"`
	ContextWindow int     `json:"contextWindow"`
	MaxOutput     int     `json:"maxOutputTokens"`
	Reasoning     bool    `json:"reasoning,omitempty"`
	Cost          Pricing `json:"cost"`
}

// Registry is the set of known models: built-in entries plus user overrides.
type Registry struct {
	models []ModelInfo
}

// Defaults when a model is not in the registry.
const (
	DefaultContextWindow = 128000
	DefaultMaxOutput     = 16384
)

// NewRegistry returns the built-in entries.
func NewRegistry() *Registry {
	r := &Registry{models: append([]ModelInfo(nil), builtinModels...)}
	return r
}

var builtinModels = []ModelInfo{
	{ID: "claude-sonnet-4-5", Provider: ProviderAnthropic, API: APIAnthropicMessages, ContextWindow: 200000, MaxOutput: 64000, Reasoning: true,
		Cost: Pricing{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
	{ID: "claude-opus-4-1", Provider: ProviderAnthropic, API: APIAnthropicMessages, ContextWindow: 200000, MaxOutput: 32000, Reasoning: true,
		Cost: Pricing{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}},
	{ID: "claude-haiku-4-5", Provider: ProviderAnthropic, API: APIAnthropicMessages, ContextWindow: 200000, MaxOutput: 64000, Reasoning: true,
		Cost: Pricing{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}},
	{ID: "gpt-5", Provider: ProviderOpenAI, API: APIOpenAIResponses, ContextWindow: 400000, MaxOutput: 128000, Reasoning: true,
		Cost: Pricing{Input: 1.25, Output: 10, CacheRead: 0.125}},
	{ID: "gpt-5-mini", Provider: ProviderOpenAI, API: APIOpenAIResponses, ContextWindow: 400000, MaxOutput: 128000, Reasoning: true,
		Cost: Pricing{Input: 0.25, Output: 2, CacheRead: 0.025}},
	{ID: "gpt-4.1", Provider: ProviderOpenAI, API: APIOpenAIChat, ContextWindow: 1047576, MaxOutput: 32768,
		Cost: Pricing{Input: 2, Output: 8, CacheRead: 0.5}},
	{ID: "script", Provider: ProviderScript, API: APIScript, ContextWindow: 128000, MaxOutput: 16384},
}

// DefaultModel returns the default model id of a provider.
func DefaultModel(provider string) string {
	switch provider {
	case ProviderAnthropic:
		return "claude-sonnet-4-5"
	case ProviderOpenAI:
		return "gpt-5"
	case ProviderScript:
		return "script"
	}
	return ""
}

// Lookup returns the entry for provider and id. An unknown model of a known provider gets a
// synthesized entry with default limits and zero cost, so local servers work without setup.
func (r *Registry) Lookup(provider, id string) (ModelInfo, bool) {
	for _, m := range r.models {
		if m.ID == id && (provider == "" || m.Provider == provider) {
			return m, true
		}
	}
	return ModelInfo{ID: id, Provider: provider, ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput}, false
}

// All returns every entry, sorted by provider then id.
func (r *Registry) All() []ModelInfo {
	out := append([]ModelInfo(nil), r.models...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ErrBadModelsFile wraps every problem with a models.json file.
var ErrBadModelsFile = errors.New("invalid models file")

type modelsFile struct {
	Models []ModelInfo `json:"models"`
}

// LoadOverrides merges the models.json file at path into r: an entry with the same provider and
// id replaces the built-in one, others are added. A missing file is not an error. The file is
// parsed strictly: unknown fields, a missing id or provider, and negative numbers are errors.
func (r *Registry) LoadOverrides(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadModelsFile, err)
	}
	var f modelsFile
	if err := strictjson.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%w: %s: %w (expected {\"models\": [{\"id\", \"provider\", \"api\", \"baseUrl\", \"contextWindow\", \"maxOutputTokens\", \"cost\": {...}}]})", ErrBadModelsFile, path, err)
	}
	for i, m := range f.Models {
		if m.ID == "" || m.Provider == "" {
			return fmt.Errorf("%w: %s: models[%d]: id and provider are required", ErrBadModelsFile, path, i)
		}
		if m.ContextWindow < 0 || m.MaxOutput < 0 || m.Cost.Input < 0 || m.Cost.Output < 0 || m.Cost.CacheRead < 0 || m.Cost.CacheWrite < 0 {
			return fmt.Errorf("%w: %s: models[%d] (%s): limits and prices must not be negative", ErrBadModelsFile, path, i, m.ID)
		}
		if m.ContextWindow == 0 {
			m.ContextWindow = DefaultContextWindow
		}
		if m.MaxOutput == 0 {
			m.MaxOutput = DefaultMaxOutput
		}
		if m.API == "" {
			m.API = defaultAPI(m.Provider)
		}
		replaced := false
		for j := range r.models {
			if r.models[j].ID == m.ID && r.models[j].Provider == m.Provider {
				r.models[j], replaced = m, true
			}
		}
		if !replaced {
			r.models = append(r.models, m)
		}
	}
	return nil
}

func defaultAPI(provider string) string {
	switch provider {
	case ProviderAnthropic:
		return APIAnthropicMessages
	case ProviderOpenAI:
		return APIOpenAIResponses
	case ProviderScript:
		return APIScript
	}
	return APIOpenAIChat
}
