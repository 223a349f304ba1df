package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/sse"
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

// defaultBaseURL is the Messages API's root.
const defaultBaseURL = "https://api.anthropic.com"

// apiVersion is the anthropic-version header every request carries.
const apiVersion = "2023-06-01"

// New returns the model cfg describes. It reads nothing from the environment.
func New(cfg Config) llm.Model {
	base := cfg.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	h := http.Header{}
	h.Set("anthropic-version", apiVersion)
	if cfg.APIKey != "" {
		h.Set("x-api-key", cfg.APIKey)
	}
	client, err := sse.NewClient(base, h, cfg.HTTPClient)
	return &model{cfg: cfg, client: client, clientErr: err}
}

type model struct {
	cfg       Config
	client    *sse.Client
	clientErr error // the base URL is not usable
}

// Stream implements [llm.Model].
func (m *model) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (final *llm.Message) {
	msg := &llm.Message{Role: llm.RoleAssistant, Provider: llm.ProviderAnthropic, API: llm.APIAnthropicMessages,
		Model: m.cfg.Model, Time: time.Now().UnixMilli()}
	s := &state{msg: msg, emit: emit, price: m.cfg.Pricing, index: map[int64]*block{}}
	defer func() {
		// Last resort: a bug in this adapter must not crash the caller.
		if r := recover(); r != nil {
			if s.final != nil { // the final event went out already
				final = s.final
				return
			}
			final = s.fail(m.redact(&llm.Error{Kind: llm.KindProtocol, Message: fmt.Sprintf("internal error while streaming: %v", r)}))
		}
	}()
	emit(llm.Event{Type: llm.EventStart})
	switch {
	case m.cfg.APIKey == "" && m.cfg.BaseURL == "":
		return s.fail(&llm.Error{Kind: llm.KindUnavailable, Message: "no API key configured for Anthropic"})
	case m.clientErr != nil:
		return s.fail(&llm.Error{Kind: llm.KindInvalid, Message: "Anthropic model: " + m.clientErr.Error()})
	}
	body, err := json.Marshal(m.body(req))
	if err != nil {
		return s.fail(&llm.Error{Kind: llm.KindInvalid, Message: "could not encode the request: " + err.Error()})
	}
	x := watchdog.New(m.cfg.Timeouts)
	res, err := m.client.Post(ctx, "v1/messages", int64(len(body)), func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(body)), nil
	}, x)
	if err != nil {
		return s.fail(m.redact(classify(ctx, x, err)))
	}
	defer func() { _ = res.Body.Close() }()
	return m.read(ctx, x, s, res.Body)
}

// read decodes the event stream of body into s.
func (m *model) read(ctx context.Context, x *watchdog.Exchange, s *state, body io.Reader) *llm.Message {
	d := sse.NewDecoder(body)
	defer d.Release()
	for d.Next() {
		if err := s.event(d.Event()); err != nil {
			return s.fail(m.redact(err))
		}
		if s.stopped {
			break
		}
	}
	if err := d.Err(); err != nil && !s.stopped {
		return s.fail(m.redact(classify(ctx, x, err)))
	}
	if _, cut := d.Cut(); cut && !s.stopped {
		return s.fail(llm.IncompleteStream(ctx, "the stream ended inside an event"))
	}
	if err := ctx.Err(); err != nil && !s.stopped {
		return s.fail(llm.TransportError(ctx, err))
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
