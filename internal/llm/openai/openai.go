package openai

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// Config configures an OpenAI model.
type Config struct {
	// Model is the model id, for example gpt-5 (required).
	Model string
	// BaseURL is the API root; empty means https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token.
	APIKey string
	// HTTPClient is used for requests; nil means a client without timeout.
	HTTPClient *http.Client
	// Pricing prices the usage.
	Pricing llm.Pricing
	// MaxTokens caps the output when the request does not; 0 leaves it to the server.
	MaxTokens int
	// API is llm.APIOpenAIResponses (the default) or llm.APIOpenAIChat.
	API string
	// Timeouts bound the wait for the response headers and for each byte of the stream;
	// zero fields mean the watchdog defaults (120 s each).
	Timeouts watchdog.Limits
}

// New returns the model cfg describes: a Responses API model, or for llm.APIOpenAIChat the
// Chat Completions model of package openaicompat in OpenAI's dialect (max_completion_tokens,
// reasoning_effort, prompt_cache_key, "strict": false) recording provider openai.
func New(cfg Config) (llm.Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: no model id")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = oaisdk.DefaultBaseURL
	}
	switch cfg.API {
	case "", llm.APIOpenAIResponses:
		c, err := oaisdk.NewClient(cfg.BaseURL, cfg.APIKey, cfg.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("openai: %w", err)
		}
		return &responsesModel{cfg: cfg, client: c}, nil
	case llm.APIOpenAIChat:
		m, err := openaicompat.New(openaicompat.Config{
			Model: cfg.Model, BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, HTTPClient: cfg.HTTPClient,
			Pricing: cfg.Pricing, MaxTokens: cfg.MaxTokens, Provider: llm.ProviderOpenAI,
			Compat: openaicompat.OpenAI(), Timeouts: cfg.Timeouts,
		})
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("openai: unknown API %q (want %s or %s)", cfg.API, llm.APIOpenAIResponses, llm.APIOpenAIChat)
}
