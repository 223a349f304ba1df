package openai_test

import (
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/llmtest"
	"github.com/reinhq/rein/internal/llm/openai"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

func newModel(t testing.TB, cfg openai.Config) llm.Model {
	t.Helper()
	m, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestResponsesConformance(t *testing.T) {
	llmtest.Run(t, llmtest.Harness{
		New: func(baseURL, apiKey string, l watchdog.Limits) llm.Model {
			return newModel(t, openai.Config{Model: "gpt-test", BaseURL: baseURL, APIKey: apiKey, API: llm.APIOpenAIResponses, Timeouts: l})
		},
		Fixture:      responsesFixture,
		CheckRequest: checkResponsesRequest,
	})
}

// TestChatConformance runs the suite over Chat Completions. CaseThinking is skipped: OpenAI's
// chat wire streams no readable reasoning.
func TestChatConformance(t *testing.T) {
	llmtest.Run(t, llmtest.Harness{
		New: func(baseURL, apiKey string, l watchdog.Limits) llm.Model {
			return newModel(t, openai.Config{Model: "gpt-test", BaseURL: baseURL, APIKey: apiKey, API: llm.APIOpenAIChat, Timeouts: l})
		},
		Fixture: chattest.Fixture(false),
		CheckRequest: chattest.CheckRequest(chattest.Expect{Model: "gpt-test", MaxTokensField: "max_completion_tokens",
			Strict: true, APIKey: llmtest.APIKey}),
	})
}
