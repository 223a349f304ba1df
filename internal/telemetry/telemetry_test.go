package telemetry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

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

// otlpJSON is the part of an OTLP/JSON ExportTraceServiceRequest the test reads, decoded by
// hand so that the encoding itself is checked: ids as hex, 64-bit integers as strings.
type otlpJSON struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []otlpKV `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Scope struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"scope"`
			Spans []otlpSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type otlpSpan struct {
	TraceID           string   `json:"traceId"`
	SpanID            string   `json:"spanId"`
	ParentSpanID      string   `json:"parentSpanId"`
	Name              string   `json:"name"`
	Kind              *int     `json:"kind"`
	StartTimeUnixNano string   `json:"startTimeUnixNano"`
	EndTimeUnixNano   string   `json:"endTimeUnixNano"`
	Attributes        []otlpKV `json:"attributes"`
	Status            *struct {
		Code int `json:"code"`
	} `json:"status"`
}

type otlpKV struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
}

// str renders an AnyValue as its one field and JSON value, e.g. intValue="120".
func (kv otlpKV) str() string {
	var parts []string
	for k, v := range kv.Value {
		b, _ := json.Marshal(v)
		parts = append(parts, k+"="+string(b))
	}
	return strings.Join(parts, ",")
}

// TestOTLPExport exports a run over OTLP/HTTP to a receiver configured only through the
// standard environment variables, and decodes the JSON it receives.
func TestOTLPExport(t *testing.T) {
	var (
		mu      sync.Mutex
		bodies  [][]byte
		headers []http.Header
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			body = zr
		}
		data, _ := io.ReadAll(body)
		mu.Lock()
		bodies, headers = append(bodies, data), append(headers, r.Header.Clone())
		mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s (%s), want POST /v1/traces with JSON", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL+"/")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=agents,x-note=a%20b")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	t.Setenv("OTEL_SERVICE_NAME", "rein-ci")

	tr, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP, Version: "v9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	run(t, tr, twoTurns, kernel.Config{}, nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("the receiver got nothing")
	}
	if headers[0].Get("X-Team") != "agents" || headers[0].Get("X-Note") != "a b" || headers[0].Get("Content-Encoding") != "gzip" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS/COMPRESSION not honoured: %v", headers[0])
	}
	names := map[string]int{}
	attrs := map[string]map[string]string{} // span name -> key -> value (last span of that name)
	resource := map[string]string{}
	byID := map[string]otlpSpan{}
	var all []otlpSpan
	traceIDs := map[string]bool{}
	hexID := regexp.MustCompile(`^[0-9a-f]+$`)
	for _, b := range bodies {
		var req otlpJSON
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("decoding the export: %v\n%s", err, b)
		}
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				resource[kv.Key] = kv.str()
			}
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.Name != "github.com/reinhq/rein/internal/telemetry" || ss.Scope.Version != "v9.9.9" {
					t.Errorf("scope %+v", ss.Scope)
				}
				for _, s := range ss.Spans {
					names[s.Name]++
					m := map[string]string{}
					for _, kv := range s.Attributes {
						m[kv.Key] = kv.str()
					}
					attrs[s.Name] = m
					byID[s.SpanID] = s
					all = append(all, s)
					traceIDs[s.TraceID] = true
					if len(s.TraceID) != 32 || len(s.SpanID) != 16 || !hexID.MatchString(s.TraceID+s.SpanID) {
						t.Errorf("%s: ids %q/%q, want lowercase hex", s.Name, s.TraceID, s.SpanID)
					}
					start, err1 := strconv.ParseInt(s.StartTimeUnixNano, 10, 64)
					end, err2 := strconv.ParseInt(s.EndTimeUnixNano, 10, 64)
					if err1 != nil || err2 != nil || start <= 0 || end < start {
						t.Errorf("%s: times %q..%q", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano)
					}
					if s.Kind == nil || s.Status == nil {
						t.Errorf("%s: kind or status missing", s.Name)
					}
				}
			}
		}
	}
	for name, n := range map[string]int{telemetry.SpanRun: 1, telemetry.SpanTurn: 2, telemetry.SpanAIRequest: 2, telemetry.SpanTool: 1,
		telemetry.SpanStep: 3, telemetry.SpanCheckpoint: 2} {
		if names[name] != n {
			t.Errorf("%d %s spans, want %d (all: %v)", names[name], name, n, names)
		}
	}
	if names[telemetry.SpanSessionWrite] == 0 {
		t.Errorf("no session writes exported")
	}
	if len(traceIDs) != 1 {
		t.Errorf("%d traces, want the run in one", len(traceIDs))
	}
	// Parent links: the run is the root, every other span's parent was exported too.
	parentName := func(s otlpSpan) string { return byID[s.ParentSpanID].Name }
	for _, s := range all {
		switch {
		case s.Name == telemetry.SpanRun:
			if s.ParentSpanID != "" {
				t.Errorf("the run has a parent %q", s.ParentSpanID)
			}
		case s.ParentSpanID == "" || byID[s.ParentSpanID].Name == "":
			t.Errorf("%s: parent %q not exported", s.Name, s.ParentSpanID)
		case s.Name == telemetry.SpanTurn && parentName(s) != telemetry.SpanRun,
			s.Name == telemetry.SpanAIRequest && parentName(s) != telemetry.SpanStep,
			s.Name == telemetry.SpanTool && parentName(s) != telemetry.SpanTurn:
			t.Errorf("%s: parent %s", s.Name, parentName(s))
		}
	}
	ai := attrs[telemetry.SpanAIRequest]
	for k, want := range map[string]string{
		telemetry.GenAIRequestModel:      `stringValue="script"`,
		telemetry.GenAIResponseModel:     `stringValue="script-answer"`,
		telemetry.GenAIUsageInputTokens:  `intValue="120"`,
		telemetry.GenAIUsageOutputTokens: `intValue="5"`,
		telemetry.GenAIProviderName:      `stringValue="script"`,
		telemetry.GenAIConversationID:    `stringValue="s-1"`,
	} {
		if ai[k] != want {
			t.Errorf("ai request %s = %s, want %s", k, ai[k], want)
		}
	}
	if tool := attrs[telemetry.SpanTool]; tool[telemetry.AttrToolReplay] != `stringValue="safe"` || tool[telemetry.GenAIToolName] != `stringValue="echo"` {
		t.Errorf("tool attributes: %v", tool)
	}
	if resource["service.name"] != `stringValue="rein-ci"` || resource["service.version"] != `stringValue="v9.9.9"` {
		t.Errorf("resource: %v", resource)
	}
	for k := range resource {
		if strings.HasPrefix(k, "process.") || strings.HasPrefix(k, "host.") {
			t.Errorf("resource attribute %s exported; the process and host detectors must stay off", k)
		}
	}
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
	mem := tracetest.NewInMemoryExporter()
	tr, err := telemetry.New(context.Background(), telemetry.Config{Export: mem})
	if err != nil {
		t.Fatal(err)
	}
	history := []llm.Message{llm.UserText("old"), {Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("old answer")}, StopReason: llm.StopEnd}}
	history[0].ID, history[1].ID = "e1", "e2"
	scenario := "version: 1\ndialogs:\n  - turns:\n      - {text: answered, usage: {input: 50, output: 5}}\n"
	run(t, tr, scenario, kernel.Config{Compactor: &compactor{}}, history)
	spans := mem.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
	}
	chain := func(s tracetest.SpanStub) string {
		var names []string
		for s.Parent.IsValid() {
			s = byID[s.Parent.SpanID().String()]
			names = append(names, s.Name)
		}
		return strings.Join(names, " < ")
	}
	var got []string
	for _, s := range spans {
		if s.Name == telemetry.SpanAIRequest {
			got = append(got, chain(s))
		}
		if s.Name == telemetry.SpanCheckpoint {
			for _, kv := range s.Attributes {
				if string(kv.Key) == telemetry.AttrCheckpointKind && kv.Value.AsString() == telemetry.CheckpointCompaction {
					var before int64
					for _, kv := range s.Attributes {
						if string(kv.Key) == telemetry.AttrTokensBefore {
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
		"rein.step < rein.checkpoint < rein.turn < rein.run", // the summary request
		"rein.step < rein.turn < rein.run",                   // the turn's request
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ai.request parents:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProviderSDKsMakeNoSpans runs each network adapter against a failing server with a
// recording global tracer provider and the W3C propagator installed, as a host application
// might: the SDKs must neither open spans of their own nor send trace headers, so the only
// span of a request is rein.ai.request.
func TestProviderSDKsMakeNoSpans(t *testing.T) {
	global := tracetest.NewInMemoryExporter()
	prev, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(global)))
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	defer func() { otel.SetTracerProvider(prev); otel.SetTextMapPropagator(prevProp) }()

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
		mem := tracetest.NewInMemoryExporter()
		tr, err := telemetry.New(context.Background(), telemetry.Config{Export: mem})
		if err != nil {
			t.Fatal(err)
		}
		inst := tr.Instrument(telemetry.Subject{Provider: name, Model: "m"})
		msg := inst.Model(m).Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}, func(llm.Event) {})
		if msg.StopReason != llm.StopError {
			t.Errorf("%s: stop %s, want an error from the failing server", name, msg.StopReason)
		}
		spans := mem.GetSpans()
		if len(spans) != 1 || spans[0].Name != telemetry.SpanAIRequest {
			t.Errorf("%s: our spans %v, want one rein.ai.request", name, spans)
		}
		var status int64
		for _, kv := range spans[0].Attributes {
			if string(kv.Key) == telemetry.HTTPResponseStatusCode {
				status = kv.Value.AsInt64()
			}
		}
		if status != 400 {
			t.Errorf("%s: http status attribute %d, want 400", name, status)
		}
	}
	if got := global.GetSpans(); len(got) != 0 {
		var names []string
		for _, s := range got {
			names = append(names, s.Name+" ("+s.InstrumentationScope.Name+")")
		}
		t.Errorf("provider SDKs opened spans of their own: %v", names)
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
	for _, p := range []string{"grpc", "http/protobuf"} {
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", p)
		if _, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP}); !errors.Is(err, telemetry.ErrConfig) || !strings.Contains(err.Error(), "http/json") {
			t.Errorf("%s protocol: %v", p, err)
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
	if n := strings.Count(string(data), `"Name":"rein.run"`); n != 2 {
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
	if !strings.Contains(stderr.String(), `"Name":"rein.ai.request"`) {
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
