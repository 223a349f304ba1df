package llm_test

import (
	"testing"
	"time"

	"github.com/reinhq/rein/internal/llm"
)

func TestProviderErrorClassify(t *testing.T) {
	const billingURL = " Add a payment method at https://platform.openai.com/account/billing to raise it."
	cases := []struct {
		name string
		p    llm.ProviderError
		kind llm.ErrorKind
	}{
		// A known code decides, whatever the status, type or text say.
		{"quota code on a 429", llm.ProviderError{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota", Message: "You exceeded your current quota."}, llm.KindSpendLimit},
		{"rate-limit code, billing text", llm.ProviderError{Status: 429, Type: "requests", Code: "rate_limit_exceeded", Message: "Rate limit reached for requests." + billingURL}, llm.KindRateLimit},
		{"spend-limit code on a 429", llm.ProviderError{Status: 429, Type: "rate_limit_error", Code: "enforced_spend_limit_reached", Message: "Please try again later."}, llm.KindSpendLimit},
		{"context code, rate-limit text", llm.ProviderError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Message: "Too many tokens for the rate limit."}, llm.KindContext},
		{"key code on a 401", llm.ProviderError{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key", Message: "Incorrect API key provided."}, llm.KindAuth},
		{"server code in a stream, invalid text", llm.ProviderError{Code: "server_error", Message: "invalid state on our side"}, llm.KindServer},
		// A specific type decides when no code is known.
		{"rate-limit type, billing text", llm.ProviderError{Status: 429, Type: "rate_limit_error", Message: "Rate limit exceeded; see Plans & Billing."}, llm.KindRateLimit},
		{"overloaded type on a 200 stream", llm.ProviderError{Type: "overloaded_error", Message: "Overloaded"}, llm.KindOverloaded},
		{"billing type", llm.ProviderError{Status: 402, Type: "billing_error", Message: "payment needed"}, llm.KindSpendLimit},
		{"auth type, overloaded text", llm.ProviderError{Status: 401, Type: "authentication_error", Message: "key rejected while overloaded"}, llm.KindAuth},
		{"request too large", llm.ProviderError{Status: 413, Type: "request_too_large", Message: "Request exceeds the maximum size"}, llm.KindContext},
		{"unknown code falls to the type", llm.ProviderError{Status: 400, Type: "not_found_error", Code: "mystery", Message: "model: x"}, llm.KindInvalid},
		// A generic type or status is refined by the text.
		{"invalid request, too long", llm.ProviderError{Status: 400, Type: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}, llm.KindContext},
		{"invalid request, credit", llm.ProviderError{Status: 400, Type: "invalid_request_error", Message: "Your credit balance is too low to access the Anthropic API."}, llm.KindSpendLimit},
		{"invalid request", llm.ProviderError{Status: 400, Type: "invalid_request_error", Message: "messages: field required"}, llm.KindInvalid},
		{"server type, overloaded text", llm.ProviderError{Status: 503, Type: "server_error", Message: "That model is currently overloaded."}, llm.KindOverloaded},
		{"plain 429 quota text", llm.ProviderError{Status: 429, Message: "You exceeded your current quota, please check your plan and billing details."}, llm.KindSpendLimit},
		{"plain 429", llm.ProviderError{Status: 429, Message: "slow down"}, llm.KindRateLimit},
		{"plain 402", llm.ProviderError{Status: 402, Message: "Insufficient Balance"}, llm.KindSpendLimit},
		{"plain 401 with billing text", llm.ProviderError{Status: 401, Message: "see billing"}, llm.KindAuth},
		{"plain 500", llm.ProviderError{Status: 500, Message: "oops"}, llm.KindServer},
		{"plain 529", llm.ProviderError{Status: 529}, llm.KindOverloaded},
		{"plain 404", llm.ProviderError{Status: 404, Message: "404 page not found"}, llm.KindInvalid},
		// In a stream, with nothing structured, the text decides; silence is a server error.
		{"stream text quota", llm.ProviderError{Message: "insufficient_quota"}, llm.KindSpendLimit},
		{"stream text overflow", llm.ProviderError{Message: "maximum context length is 8192 tokens"}, llm.KindContext},
		{"stream text invalid", llm.ProviderError{Message: "invalid tool schema"}, llm.KindInvalid},
		{"stream silence", llm.ProviderError{}, llm.KindServer},
	}
	for _, c := range cases {
		e := c.p.Classify()
		retryable := c.kind == llm.KindRateLimit || c.kind == llm.KindOverloaded || c.kind == llm.KindServer
		if e.Kind != c.kind || e.Retryable != retryable || e.Status != c.p.Status || e.Message == "" {
			t.Errorf("%s: %+v, want kind %s retryable %v status %d and a message", c.name, e, c.kind, retryable, c.p.Status)
		}
	}
	if e := (llm.ProviderError{Status: 429, RetryAfter: 1500 * time.Millisecond}).Classify(); e.RetryAfter() != 1500*time.Millisecond {
		t.Errorf("retry after = %v, want 1.5s", e.RetryAfter())
	}
}
