package oaisdk

import "github.com/reinhq/rein/internal/llm"

// Usage normalises OpenAI token counts, where the prompt total includes the cached tokens:
// input = prompt - cached, cacheRead = cached, cacheWrite = 0 (OpenAI reports no cache writes;
// written tokens are billed as input). The cost is priced with p. Negative or inconsistent
// counts are clamped to zero.
func Usage(prompt, completion, cached int64, p llm.Pricing) *llm.Usage {
	cached = max(cached, 0)
	u := &llm.Usage{
		Input:     int(max(prompt-cached, 0)),
		Output:    int(max(completion, 0)),
		CacheRead: int(cached),
	}
	u.Price(p)
	return u
}
