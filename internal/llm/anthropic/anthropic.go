package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// Config configures one model of the Anthropic Messages API.
type Config struct {
	// Model is the model id sent to the API, for example "claude-sonnet-4-5".
	Model string
	// BaseURL replaces https://api.anthropic.com (a proxy or a test server).
	BaseURL string
	// APIKey is sent in the x-api-key header.
	APIKey string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Pricing prices the usage of every response.
	Pricing llm.Pricing
	// MaxTokens is the model's output limit, used when a request sets none and to bound the
	// thinking budget; zero means unknown ([llm.DefaultMaxOutput] is then the default).
	MaxTokens int
	// Timeouts bound the wait for the response headers and for each byte of the stream;
	// zero fields mean the watchdog defaults (120 s each).
	Timeouts watchdog.Limits
}

// New returns the model cfg describes. It reads nothing from the environment.
func New(cfg Config) llm.Model {
	opts := []option.RequestOption{
		// Credentials, base URL and headers come from cfg only, never from ANTHROPIC_* variables
		// or profile files.
		option.WithoutEnvironmentDefaults(),
		// llm.Retry retries; the SDK must not retry on its own.
		option.WithMaxRetries(0),
		// rein makes its own spans; the SDK's spans and trace-context headers are switched off.
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.APIKey != "" {
		// The Messages API takes the key in x-api-key (the SDK's WithAPIKey would send it as
		// a bearer token).
		opts = append(opts, option.WithHeader("x-api-key", cfg.APIKey))
	}
	client := sdk.NewClient(opts...)
	return &model{cfg: cfg, api: client.Messages}
}

type model struct {
	cfg Config
	api sdk.MessageService
}

// Stream implements [llm.Model].
func (m *model) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (final *llm.Message) {
	msg := &llm.Message{Role: llm.RoleAssistant, Provider: llm.ProviderAnthropic, API: llm.APIAnthropicMessages,
		Model: m.cfg.Model, Time: time.Now().UnixMilli()}
	s := &state{msg: msg, emit: emit, price: m.cfg.Pricing, index: map[int64]*block{}}
	defer func() {
		// Last resort: a bug in this adapter or the SDK must not crash the caller.
		if r := recover(); r != nil {
			if s.final != nil { // the final event went out already
				final = s.final
				return
			}
			final = s.fail(m.redact(&llm.Error{Kind: llm.KindProtocol, Message: fmt.Sprintf("internal error while streaming: %v", r)}))
		}
	}()
	emit(llm.Event{Type: llm.EventStart})
	if m.cfg.APIKey == "" && m.cfg.BaseURL == "" {
		return s.fail(&llm.Error{Kind: llm.KindUnavailable, Message: "no API key configured for Anthropic"})
	}
	x := watchdog.New(m.cfg.Timeouts)
	params, opts := m.params(req)
	stream := m.api.NewStreaming(ctx, params, append(opts, option.WithMiddleware(x.Middleware))...)
	defer stream.Close()
	for stream.Next() {
		if err := s.event(stream.Current()); err != nil {
			return s.fail(m.redact(err))
		}
		if s.stopped {
			break
		}
	}
	if err := stream.Err(); err != nil && !s.stopped {
		return s.fail(m.redact(classify(ctx, x, err)))
	}
	switch {
	case !s.stopped:
		// A clean end of the body without message_stop: the connection was cut.
		return s.fail(llm.IncompleteStream(ctx, "the stream ended before message_stop"))
	case s.reason == "":
		return s.fail(llm.IncompleteStream(ctx, "message_stop came without a stop_reason (no message_delta carried one)"))
	}
	return s.finish()
}
