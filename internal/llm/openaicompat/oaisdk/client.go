// Package oaisdk is the wire plumbing shared by rein's two OpenAI adapters (packages openai and
// openaicompat): the HTTP client with OpenAI's bearer key, error classification, usage
// normalisation, and the [Assembler] that turns decoded stream content into llm events and the
// final message. The HTTP client and the server-sent-event decoder themselves are package
// sse's, shared with the Anthropic adapter. It was once built on the openai-go SDK (hence the
// name); it is now rein's own, on net/http, because that SDK was 40 % of the binary and ~7 MB
// of every start's RSS (bench/NOTES.md).
//
// Guarantees:
//
//   - [NewClient]'s client never reads the environment (no OPENAI_API_KEY, OPENAI_BASE_URL, …),
//     sends no Authorization header when the key is empty, and never retries: retrying is
//     [llm.Retry]'s job.
//   - [Classify] and [StreamFailure] never return a message containing the API key.
package oaisdk

import (
	"net/http"
	"strings"

	"github.com/reinhq/rein/internal/llm/sse"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// NewClient returns a client talking to baseURL with apiKey as a bearer token. An empty apiKey
// sends no Authorization header (keyless local servers); a nil hc uses a shared client without
// timeout. The base URL must be absolute (http or https).
func NewClient(baseURL, apiKey string, hc *http.Client) (*sse.Client, error) {
	h := http.Header{}
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	return sse.NewClient(baseURL, h, hc)
}

// redact removes key from s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
