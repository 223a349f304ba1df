package telemetry_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/llm/openai"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/telemetry"
	"github.com/reinhq/rein/internal/tool"
)

// echo is a replay-safe tool that answers "ok".
type echo struct{}

func (echo) Spec() tool.Spec {
	return tool.Spec{Name: "echo", Description: "answers ok", Replay: tool.ReplaySafe,
		Schema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`)}
}

func (echo) Run(context.Context, tool.Call) (tool.Result, error) { return tool.TextResult("ok"), nil }

const twoTurns = `
version: 1
model: script-answer
pricing: {input: 3, output: 15}
turns:
  - {text: calling, calls: [{name: echo, id: call_1, args: {n: 1}}], usage: {input: 100, output: 10}}
  - {text: done, usage: {input: 120, output: 5}}
`

// memory keeps every span it is given.
type memory struct {
	mu    sync.Mutex
	spans []*telemetry.SpanRecord
}

func (m *memory) ExportSpans(_ context.Context, spans []*telemetry.SpanRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spans = append(m.spans, spans...)
	return nil
}

func (m *memory) Shutdown(context.Context) error { return nil }

func (m *memory) get() []*telemetry.SpanRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*telemetry.SpanRecord(nil), m.spans...)
}

// run runs the scenario on an agent instrumented by tr.
func run(t testing.TB, tr *telemetry.Tracer, scenario string, cfg kernel.Config, history []llm.Message) *kernel.Outcome {
	t.Helper()
	m, err := script.Parse([]byte(scenario), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.New(echo{})
	if err != nil {
		t.Fatal(err)
	}
	inst := tr.Instrument(telemetry.Subject{SessionID: "s-1", Provider: llm.ProviderScript, Model: "script", Tools: set.Names()})
	cfg.Model, cfg.Tools = inst.Model(m), set
	if cfg.Recorder == nil {
		cfg.Recorder = &kernel.Memory{}
	}
	cfg.Recorder = inst.Recorder(cfg.Recorder)
	cfg.Observe = inst.Observe(cfg.Observe)
	if c, ok := cfg.Compactor.(*compactor); ok {
		c.model = cfg.Model
	}
	a, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), history, llm.UserText("go"))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// compactor compacts once, before the first request, with one summarization request on the
// instrumented model.
type compactor struct {
	model llm.Model
	done  bool
}

func (c *compactor) Needed([]llm.Message) bool { return !c.done }

func (c *compactor) Compact(ctx context.Context, msgs []llm.Message, _ string) (llm.Message, int, int, llm.Usage, error) {
	c.done = true
	m := c.model.Stream(ctx, &llm.Request{Messages: msgs}, func(llm.Event) {})
	return llm.UserText("summary"), 2, 4000, *m.Usage, nil
}

// TestCompactionCheckpoint checks the spans of a compaction: a checkpoint around a step
// around the summarization request, inside the turn that needed it.
func TestCompactionCheckpoint(t *testing.T) {
	mem := &memory{}
	tr, err := telemetry.New(context.Background(), telemetry.Config{Export: mem})
	if err != nil {
		t.Fatal(err)
	}
	history := []llm.Message{llm.UserText("old"), {Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("old answer")}, StopReason: llm.StopEnd}}
	history[0].ID, history[1].ID = "e1", "e2"
	scenario := "version: 1\ndialogs:\n  - turns:\n      - {text: answered, usage: {input: 50, output: 5}}\n"
	run(t, tr, scenario, kernel.Config{Compactor: &compactor{}}, history)
	spans := mem.get()
	byID := map[telemetry.SpanID]*telemetry.SpanRecord{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	chain := func(s *telemetry.SpanRecord) string {
		var names []string
		for s.Parent.IsValid() {
			s = byID[s.Parent]
			names = append(names, s.Name)
		}
		return strings.Join(names, " < ")
	}
	var got []string
	for _, s := range spans {
		if s.Name == telemetry.ChatSpan("script") {
			got = append(got, chain(s))
		}
		if s.Name == telemetry.SpanCheckpoint {
			for _, kv := range s.Attributes {
				if kv.Key == telemetry.AttrCheckpointKind && kv.Value.AsString() == telemetry.CheckpointCompaction {
					var before int64
					for _, kv := range s.Attributes {
						if kv.Key == telemetry.AttrTokensBefore {
							before = kv.Value.AsInt64()
						}
					}
					if before != 4000 {
						t.Errorf("compaction checkpoint tokens before %d, want 4000", before)
					}
				}
			}
		}
	}
	want := []string{
		"rein.step < rein.checkpoint < rein.turn < invoke_agent rein", // the summary request
		"rein.step < rein.turn < invoke_agent rein",                   // the turn's request
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ai.request parents:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProviderSDKsMakeNoSpans runs each network adapter against a failing server: the
// adapters must neither open spans of their own nor send trace headers, so the only span of a
// request is rein's chat span (with error.type set from the failure). rein links no
// OpenTelemetry API at all (TestLinksNoOpenTelemetry), so there is no global tracer provider
// an adapter could trace through.
func TestProviderSDKsMakeNoSpans(t *testing.T) {
	var mu sync.Mutex
	var traceHeaders []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, h := range []string{"traceparent", "tracestate", "baggage"} {
			if v := r.Header.Get(h); v != "" {
				traceHeaders = append(traceHeaders, r.URL.Path+": "+h+"="+v)
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"no"}}`)
	}))
	defer srv.Close()

	const key = "sk-test-0123456789"
	oa, err := openai.New(openai.Config{Model: "gpt-5", BaseURL: srv.URL + "/v1", APIKey: key, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	chat, err := openai.New(openai.Config{Model: "gpt-5", BaseURL: srv.URL + "/v1", APIKey: key, HTTPClient: srv.Client(), API: llm.APIOpenAIChat})
	if err != nil {
		t.Fatal(err)
	}
	compat, err := openaicompat.New(openaicompat.Config{Model: "llama", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]llm.Model{
		llm.ProviderAnthropic:    anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: key, HTTPClient: srv.Client()}),
		llm.ProviderOpenAI:       oa,
		"openai-chat":            chat,
		llm.ProviderOpenAICompat: compat,
	}
	for name, m := range models {
		mem := &memory{}
		tr, err := telemetry.New(context.Background(), telemetry.Config{Export: mem})
		if err != nil {
			t.Fatal(err)
		}
		inst := tr.Instrument(telemetry.Subject{Provider: name, Model: "m"})
		msg := inst.Model(m).Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}, func(llm.Event) {})
		if msg.StopReason != llm.StopError {
			t.Errorf("%s: stop %s, want an error from the failing server", name, msg.StopReason)
		}
		spans := mem.get()
		if len(spans) != 1 || spans[0].Name != "chat m" {
			t.Fatalf("%s: our spans %v, want one chat m", name, spans)
		}
		status, _ := spans[0].Attr(telemetry.HTTPResponseStatusCode)
		errType, _ := spans[0].Attr(telemetry.ErrorType)
		if status.AsInt64() != 400 || errType.AsString() != string(llm.KindInvalid) || spans[0].Status.Description != errType.AsString() {
			t.Errorf("%s: http status attribute %v, error.type %v, status %v; want 400, invalid", name, status, errType, spans[0].Status)
		}
	}
	if len(traceHeaders) > 0 {
		t.Errorf("trace headers sent: %v", traceHeaders)
	}
}

// TestOffPassesThrough checks that tracing off costs nothing: no tracer, and the model,
// recorder and observer come back as they were.
func TestOffPassesThrough(t *testing.T) {
	tr, err := telemetry.New(context.Background(), telemetry.Config{})
	if err != nil || tr != nil {
		t.Fatalf("off: %v, %v", tr, err)
	}
	inst := tr.Instrument(telemetry.Subject{})
	rec := &kernel.Memory{}
	if inst != nil || inst.Recorder(rec) != kernel.Recorder(rec) || inst.Observe(nil) != nil {
		t.Error("a nil instrument must pass everything through")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"otel", "file:", "stdout:x", "OTLP"} {
		if err := telemetry.CheckExporter(bad); err == nil {
			t.Errorf("--trace %q accepted", bad)
		}
	}
	for p, want := range map[string]string{"grpc": "rein exports OTLP over HTTP only", "http/thrift": "want http/protobuf (the default) or http/json"} {
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", p)
		if _, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP}); !errors.Is(err, telemetry.ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s protocol: %v, want a configuration error saying %q", p, err, want)
		}
	}
}

// TestFileAndStdoutExporters writes spans to a file (appending across runs) and to the
// writer that stands for stderr.
func TestFileAndStdoutExporters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spans.json")
	for range 2 {
		tr, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportFile + path})
		if err != nil {
			t.Fatal(err)
		}
		run(t, tr, twoTurns, kernel.Config{}, nil)
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"Name":"invoke_agent rein"`); n != 2 {
		t.Errorf("%d runs in the trace file, want 2 (appended)", n)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("trace file mode %v, want 0600", st.Mode().Perm())
	}
	var stderr bytes.Buffer
	tr, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportStdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	run(t, tr, twoTurns, kernel.Config{}, nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), `"Name":"chat script"`) {
		t.Errorf("stdout exporter wrote:\n%.500s", stderr.String())
	}
}

// TestSemanticConventionNames pins the GenAI attribute names we emit.
func TestSemanticConventionNames(t *testing.T) {
	got := []string{telemetry.GenAIOperationName, telemetry.GenAIProviderName, telemetry.GenAIConversationID,
		telemetry.GenAIRequestModel, telemetry.GenAIRequestMaxTokens, telemetry.GenAIResponseModel, telemetry.GenAIResponseID,
		telemetry.GenAIResponseFinishReason, telemetry.GenAIUsageInputTokens, telemetry.GenAIUsageOutputTokens,
		telemetry.GenAIUsageCacheReadTokens, telemetry.GenAIUsageCacheWriteTokens, telemetry.GenAIToolName, telemetry.GenAIToolCallID}
	want := []string{"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.conversation.id", "gen_ai.request.model",
		"gen_ai.request.max_tokens", "gen_ai.response.model", "gen_ai.response.id", "gen_ai.response.finish_reasons",
		"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens",
		"gen_ai.usage.cache_creation.input_tokens", "gen_ai.tool.name", "gen_ai.tool.call.id"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names changed:\n%v\nwant\n%v", got, want)
	}
}

// TestExportFailureReported checks that a failing collector is reported once, by Shutdown,
// instead of being logged in the middle of a run.
func TestExportFailureReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	tr, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP})
	if err != nil {
		t.Fatal(err)
	}
	run(t, tr, twoTurns, kernel.Config{}, nil)
	err = tr.Shutdown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1 of 1 exports failed") || !strings.Contains(err.Error(), "400") {
		t.Errorf("Shutdown: %v, want the failed export reported", err)
	}
}
