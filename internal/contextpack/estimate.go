package contextpack

import (
	"strings"

	"github.com/reinhq/rein/internal/tokenizer"
)

// Estimator counts the tokens a text costs a model, offline. Estimates are for inspection
// and budgeting before a request; once a provider reports usage, that number wins.
// Implementations are safe for concurrent use.
type Estimator interface {
	// Tokens returns the estimated token count of text.
	Tokens(text string) int
	// Name says how the estimate is made, e.g. "o200k_base" or "bytes/4".
	Name() string
}

// Bytes4 is the fallback estimator for models without an offline tokenizer (Anthropic,
// OpenAI-compatible servers, the script model): ceil(bytes/4). It is a rough average for
// English prose and code; real counts differ by tokenizer, typically within ±30%.
type Bytes4 struct{}

// Tokens returns ceil(len(text)/4).
func (Bytes4) Tokens(text string) int { return (len(text) + 3) / 4 }

// Name returns "bytes/4".
func (Bytes4) Name() string { return "bytes/4" }

// EstimatorFor returns the estimator for a model: OpenAI's own tokenizers (vocabularies
// compiled in, no network) for provider "openai" — o200k_base for the gpt-4o, gpt-4.1, gpt-5
// and o-series families, cl100k_base for every other model — and [Bytes4] for every other
// provider.
func EstimatorFor(provider, model string) Estimator {
	if provider != "openai" {
		return Bytes4{}
	}
	if usesO200k(model) {
		return o200k()
	}
	return cl100k()
}

func usesO200k(model string) bool {
	m := strings.ToLower(model)
	for _, p := range []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") || strings.HasPrefix(m, p+".") {
			return true
		}
	}
	return false
}

// openAIEncoding estimates with an OpenAI encoding; its vocabulary is read on its first use.
type openAIEncoding struct{ enc *tokenizer.Encoding }

func o200k() Estimator  { return openAIEncoding{tokenizer.O200kBase()} }
func cl100k() Estimator { return openAIEncoding{tokenizer.Cl100kBase()} }

func (o openAIEncoding) Tokens(text string) int { return o.enc.Count(text) }

func (o openAIEncoding) Name() string { return o.enc.Name() }
