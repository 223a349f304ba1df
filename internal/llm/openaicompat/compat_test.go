package openaicompat_test

import (
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/llmtest"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

func newModel(t testing.TB, cfg openaicompat.Config) *openaicompat.Model {
	t.Helper()
	m, err := openaicompat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConformance(t *testing.T) {
	llmtest.Run(t, llmtest.Harness{
		New: func(baseURL, apiKey string, l watchdog.Limits) llm.Model {
			return newModel(t, openaicompat.Config{Model: "qwen2.5-coder", BaseURL: baseURL, APIKey: apiKey, Timeouts: l})
		},
		Fixture:      chattest.Fixture(true),
		CheckRequest: chattest.CheckRequest(chattest.Expect{Model: "qwen2.5-coder", MaxTokensField: "max_tokens", APIKey: llmtest.APIKey}),
	})
}
