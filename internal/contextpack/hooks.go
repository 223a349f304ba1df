package contextpack

import (
	"context"
	"strings"

	"github.com/reinhq/rein/internal/llm"
)

// CutAtPrefix is a context hook that sends the model only the conversation from the latest user
// message whose text starts with Prefix: nothing before that message reaches the provider. A
// delivery stage uses it so that each request carries its own pack and nothing earlier. When no
// user message carries the prefix, the list is left unchanged.
type CutAtPrefix struct {
	Prefix string
}

// Context implements kernel.ContextHook.
func (h CutAtPrefix) Context(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && strings.HasPrefix(msgs[i].Text(), h.Prefix) {
			return msgs[i:], nil
		}
	}
	return msgs, nil
}
