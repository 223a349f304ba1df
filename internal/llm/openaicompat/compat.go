package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
	"github.com/reinhq/rein/internal/llm/sse"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// Names of the request field that caps the output.
const (
	FieldMaxTokens           = "max_tokens"
	FieldMaxCompletionTokens = "max_completion_tokens"
)

// Compat lists the request dialect a server understands. The zero value suits local servers
// (ollama, vLLM, llama.cpp, LM Studio): max_tokens, no reasoning_effort, no prompt_cache_key,
// no "strict" in tool definitions.
type Compat struct {
	// MaxTokensField is FieldMaxTokens (default) or FieldMaxCompletionTokens.
	MaxTokensField string
	// ReasoningEffort sends reasoning_effort when the request asks for thinking.
	ReasoningEffort bool
	// PromptCacheKey sends prompt_cache_key = Request.SessionID when it is set.
	PromptCacheKey bool
	// StrictField sends "strict": false in tool definitions.
	StrictField bool
}

// OpenAI is the dialect of OpenAI's own Chat Completions API.
func OpenAI() Compat {
	return Compat{MaxTokensField: FieldMaxCompletionTokens, ReasoningEffort: true, PromptCacheKey: true, StrictField: true}
}

// Config configures a Chat Completions model.
type Config struct {
	// Model is the model id sent to the server (required).
	Model string
	// BaseURL is the API root "chat/completions" is resolved against, for example
	// http://localhost:11434/v1 (required).
	BaseURL string
	// APIKey is sent as a bearer token. Empty sends no Authorization header.
	APIKey string
	// HTTPClient is used for requests; nil means a client without timeout.
	HTTPClient *http.Client
	// Pricing prices the usage.
	Pricing llm.Pricing
	// MaxTokens caps the output when the request does not; 0 leaves it to the server.
	MaxTokens int
	// Provider is recorded on the messages; empty means llm.ProviderOpenAICompat.
	Provider string
	// Compat is the request dialect.
	Compat Compat
	// Timeouts bound the wait for the response headers and for each byte of the stream;
	// zero fields mean the watchdog defaults (120 s each).
	Timeouts watchdog.Limits
}

// Model streams Chat Completions. It implements [llm.Model].
type Model struct {
	cfg     Config
	client  *sse.Client
	schemas schemaCache
	msgs    msgCache
	bodies  bodyBuffer
}

var _ llm.Model = (*Model)(nil)

// New returns a model for cfg. It fails when the model id or base URL is missing or invalid,
// or the max-tokens field is unknown.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openaicompat: no model id")
	}
	if cfg.BaseURL == "" {
		return nil, errors.New("openaicompat: no base URL")
	}
	switch cfg.Compat.MaxTokensField {
	case "":
		cfg.Compat.MaxTokensField = FieldMaxTokens
	case FieldMaxTokens, FieldMaxCompletionTokens:
	default:
		return nil, errors.New("openaicompat: unknown max tokens field " + cfg.Compat.MaxTokensField)
	}
	if cfg.Provider == "" {
		cfg.Provider = llm.ProviderOpenAICompat
	}
	c, err := oaisdk.NewClient(cfg.BaseURL, cfg.APIKey, cfg.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("openaicompat: %w", err)
	}
	return &Model{cfg: cfg, client: c}, nil
}

// Stream streams one assistant turn. See the package documentation for the contract.
func (m *Model) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (out *llm.Message) {
	msg := &llm.Message{Role: llm.RoleAssistant, Provider: m.cfg.Provider, API: llm.APIOpenAIChat,
		Model: m.cfg.Model, Time: time.Now().UnixMilli()}
	a := oaisdk.NewAssembler(msg, emit)
	defer oaisdk.Guard(a, &out, m.cfg.APIKey)

	w := &bodyWriter{b: m.bodies.get(8192)}
	if perr := writeBody(w, &m.cfg, req, &m.schemas, &m.msgs); perr != nil {
		m.bodies.put(w.b)
		return a.Fail(perr)
	}
	segs, n := w.segments()
	lease := &bodyLease{pool: &m.bodies, buf: w.b, segs: segs}
	defer lease.end()
	if ctx.Err() != nil {
		return a.Fail(llm.TransportError(ctx, ctx.Err()))
	}
	x := watchdog.New(m.cfg.Timeouts)
	res, err := m.client.Post(ctx, "chat/completions", int64(n), lease.reader, x)
	if err != nil {
		return a.Fail(oaisdk.StreamError(ctx, x, err, m.cfg.APIKey))
	}
	defer func() { _ = res.Body.Close() }()
	d := sse.NewDecoder(res.Body)
	defer d.Release()
	s := newChatStream(a, m.cfg.Pricing)
	for d.Next() && ctx.Err() == nil {
		data := d.Event().Data
		if bytes.HasPrefix(data, done) {
			s.done = true
			break
		}
		if err := s.chunk(data); err != nil {
			return a.Fail(oaisdk.StreamError(ctx, x, err, m.cfg.APIKey))
		}
	}
	if err := d.Err(); err != nil || ctx.Err() != nil {
		return a.Fail(oaisdk.StreamError(ctx, x, err, m.cfg.APIKey))
	}
	if ev, cut := d.Cut(); cut {
		s.done = s.done || bytes.HasPrefix(ev.Data, done) // an unterminated "data: [DONE]"
		s.cut = !s.done
	}
	return s.finish()
}

// done is the data of the event that ends a chat stream.
var done = []byte("[DONE]")
