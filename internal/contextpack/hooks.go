package contextpack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/llm"
)

// ErrPrefixMissing reports that no user message of a request starts with the prefix a
// [CutAtPrefix] hook cuts at: the hook fails closed and no request is sent, since sending the
// whole conversation would break the boundary the hook exists to keep.
var ErrPrefixMissing = errors.New("no user message starts with the context prefix")

// CutAtPrefix is a context hook that sends the model only the conversation from the latest user
// message whose text starts with Prefix: nothing before that message reaches the provider. A
// delivery stage uses it so that each request carries its own pack and nothing earlier. When no
// user message carries the prefix (or Prefix is empty), it fails closed with [ErrPrefixMissing].
type CutAtPrefix struct {
	Prefix string
}

// Context implements kernel.ContextHook.
func (h CutAtPrefix) Context(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	if h.Prefix == "" {
		return nil, fmt.Errorf("%w: the hook has an empty prefix", ErrPrefixMissing)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && strings.HasPrefix(msgs[i].Text(), h.Prefix) {
			return msgs[i:], nil
		}
	}
	return nil, fmt.Errorf("%w %q among %d messages; nothing was sent", ErrPrefixMissing, h.Prefix, len(msgs))
}
