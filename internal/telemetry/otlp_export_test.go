package telemetry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/telemetry"
	"github.com/reinhq/rein/internal/tool"
)

// receiver is an OTLP/HTTP trace receiver that decodes every request with the official OTLP
// protobuf types: the binary encoding with proto.Unmarshal, the JSON encoding with protojson
// (strict: an unknown field is an error) once its hex ids are turned into the base64 the
// generic protobuf JSON mapping expects.
type receiver struct {
	t    *testing.T
	mu   sync.Mutex
	reqs []*coltracepb.ExportTraceServiceRequest
	raw  []string // each body as sent, decompressed
	hdrs []http.Header
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			rc.t.Errorf("gzip: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		rc.t.Errorf("reading the export: %v", err)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		rc.t.Errorf("%s %s, want POST /v1/traces", r.Method, r.URL.Path)
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	ct := r.Header.Get("Content-Type")
	var resp []byte
	switch ct {
	case "application/x-protobuf":
		err = proto.Unmarshal(data, req)
		resp, _ = proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	case "application/json":
		err = protojson.Unmarshal(otlpJSONToProtoJSON(rc.t, data), req)
		resp = []byte(`{}`)
	default:
		rc.t.Errorf("Content-Type %q", ct)
	}
	if err != nil {
		rc.t.Errorf("decoding the %s export: %v", ct, err)
	}
	rc.mu.Lock()
	rc.reqs, rc.raw, rc.hdrs = append(rc.reqs, req), append(rc.raw, string(data)), append(rc.hdrs, r.Header.Clone())
	rc.mu.Unlock()
	w.Header().Set("Content-Type", ct)
	w.Write(resp)
}

// otlpJSONToProtoJSON rewrites OTLP/JSON's hex trace and span ids as base64, which is all that
// tells OTLP/JSON from the generic protobuf JSON mapping; an id that is not hex fails the test.
func otlpJSONToProtoJSON(t *testing.T, data []byte) []byte {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Errorf("OTLP/JSON body: %v", err)
		return data
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
					b, err := hex.DecodeString(s)
					if err != nil {
						t.Errorf("%s %q is not hex", k, s)
					}
					v[k] = base64.StdEncoding.EncodeToString(b)
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	out, _ := json.Marshal(doc)
	return out
}

// spans returns every span received, with its resource's attributes.
func (rc *receiver) spans() (spans []*tracepb.Span, resource map[string]*commonpb.AnyValue) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	resource = map[string]*commonpb.AnyValue{}
	for _, req := range rc.reqs {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				resource[kv.Key] = kv.Value
			}
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans, resource
}

func attrsOf(s *tracepb.Span) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// note is a tool whose call carries text (a secret, in the test) and which fails.
type note struct{}

func (note) Spec() tool.Spec {
	return tool.Spec{Name: "note", Description: "takes a note", Replay: tool.ReplayNever,
		Schema: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)}
}

func (note) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: []llm.Part{llm.Text("disk full while writing " + secretOutput)}, IsError: true}, nil
}

const (
	secretArg    = "sk-ant-api03-ARGUMENTSECRET0123456789"
	secretOutput = "ghp_OUTPUTSECRET0123456789abcdef0123"
	secretHeader = "Bearer otlp-HEADERSECRET-42"
	secretURL    = "URLSECRET77"
)

const noteScenario = `
version: 1
model: script-answer
turns:
  - {text: noting, calls: [{name: note, id: call_1, args: {text: "remember ` + secretArg + `"}}], usage: {input: 100, output: 10}}
  - {text: done, usage: {input: 120, output: 5}}
`

// runNote runs noteScenario on an agent traced by tr, as if its provider were behind baseURL.
func runNote(t *testing.T, tr *telemetry.Tracer, baseURL string) {
	t.Helper()
	m, err := script.Parse([]byte(noteScenario), "note.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.New(note{})
	if err != nil {
		t.Fatal(err)
	}
	inst := tr.Instrument(telemetry.Subject{SessionID: "s-1", Provider: llm.ProviderScript, Model: "script", Tools: set.Names(), BaseURL: baseURL})
	a, err := kernel.New(kernel.Config{Model: inst.Model(m), Tools: set, Recorder: inst.Recorder(&kernel.Memory{}), Observe: inst.Observe(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("take a note")); err != nil {
		t.Fatalf("run: %v", err)
	}
}

// TestOTLPExport exports a run over OTLP/HTTP in each encoding, with and without gzip, to a
// receiver configured only by the standard variables, and checks what the official OTLP types
// decode: the GenAI span names and attributes, error.type on the failed tool call, the tree
// invoke_agent > rein.turn > rein.step > chat and invoke_agent > rein.turn > execute_tool, and
// that neither the tool's argument nor its output nor a header value is in the body.
func TestOTLPExport(t *testing.T) {
	for _, tc := range []struct{ protocol, compression, contentType string }{
		{"", "", "application/x-protobuf"}, // the default
		{"http/protobuf", "gzip", "application/x-protobuf"},
		{"http/json", "", "application/json"},
		{"http/json", "gzip", "application/json"},
	} {
		t.Run(tc.protocol+"+"+tc.compression, func(t *testing.T) {
			rc := &receiver{t: t}
			srv := httptest.NewServer(rc)
			defer srv.Close()
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL+"/")
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization="+strings.ReplaceAll(secretHeader, " ", "%20")+",x-team=agents")
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", tc.compression)
			t.Setenv("OTEL_SERVICE_NAME", "rein-ci")
			tr, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP, Version: "v9.9.9"})
			if err != nil {
				t.Fatal(err)
			}
			runNote(t, tr, "https://user:"+secretURL+"@llm.example:8443/v1?key="+secretURL)
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(rc.reqs) == 0 {
				t.Fatal("the receiver got nothing")
			}
			h := rc.hdrs[0]
			if h.Get("Content-Type") != tc.contentType || h.Get("Authorization") != secretHeader || h.Get("X-Team") != "agents" ||
				(h.Get("Content-Encoding") == "gzip") != (tc.compression == "gzip") {
				t.Errorf("headers %v", h)
			}
			for _, body := range rc.raw {
				for _, secret := range []string{secretArg, secretOutput, secretHeader, secretURL, "remember", "disk full"} {
					if strings.Contains(body, secret) {
						t.Errorf("%q is in the exported body", secret)
					}
				}
			}
			checkGenAISpans(t, rc)
		})
	}
}

// checkGenAISpans checks the spans of noteScenario.
func checkGenAISpans(t *testing.T, rc *receiver) {
	t.Helper()
	spans, resource := rc.spans()
	byID := map[string]*tracepb.Span{}
	names := map[string]int{}
	for _, s := range spans {
		byID[string(s.SpanId)] = s
		names[s.Name]++
		if len(s.TraceId) != 16 || !bytes.Equal(s.TraceId, spans[0].TraceId) || len(s.SpanId) != 8 {
			t.Errorf("%s: trace %x span %x, want every span in one trace", s.Name, s.TraceId, s.SpanId)
		}
		if s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("%s: times %d..%d", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
	for name, n := range map[string]int{"invoke_agent rein": 1, "chat script": 2, "execute_tool note": 1, telemetry.SpanTurn: 2} {
		if names[name] != n {
			t.Errorf("%d %q spans, want %d (all: %v)", names[name], name, n, names)
		}
	}
	chain := func(s *tracepb.Span) string {
		var up []string
		for p := byID[string(s.ParentSpanId)]; p != nil; p = byID[string(p.ParentSpanId)] {
			up = append(up, p.Name)
		}
		return strings.Join(up, " < ")
	}
	str := func(a map[string]*commonpb.AnyValue, k string) string { return a[k].GetStringValue() }
	num := func(a map[string]*commonpb.AnyValue, k string) int64 { return a[k].GetIntValue() }
	var chats []*tracepb.Span
	var toolSpan *tracepb.Span
	for _, s := range spans {
		a := attrsOf(s)
		switch s.Name {
		case "invoke_agent rein":
			if len(s.ParentSpanId) != 0 || s.Kind != tracepb.Span_SPAN_KIND_INTERNAL || str(a, "gen_ai.operation.name") != "invoke_agent" ||
				str(a, "gen_ai.agent.name") != "rein" || str(a, "gen_ai.provider.name") != "script" || str(a, "gen_ai.request.model") != "script" ||
				num(a, "gen_ai.usage.input_tokens") != 220 || num(a, "gen_ai.usage.output_tokens") != 15 || str(a, "rein.run.status") != "completed" {
				t.Errorf("invoke_agent: parent %x kind %v attributes %v", s.ParentSpanId, s.Kind, a)
			}
		case "chat script":
			chats = append(chats, s)
			if got := chain(s); got != "rein.step < rein.turn < invoke_agent rein" {
				t.Errorf("chat under %s", got)
			}
			if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || str(a, "gen_ai.operation.name") != "chat" || str(a, "gen_ai.provider.name") != "script" ||
				str(a, "gen_ai.request.model") != "script" || str(a, "gen_ai.response.model") != "script-answer" ||
				str(a, "server.address") != "llm.example" || num(a, "server.port") != 8443 || a["error.type"] != nil {
				t.Errorf("chat: kind %v attributes %v", s.Kind, a)
			}
		case "execute_tool note":
			toolSpan = s
			if got := chain(s); got != "rein.turn < invoke_agent rein" {
				t.Errorf("execute_tool under %s", got)
			}
			if s.Kind != tracepb.Span_SPAN_KIND_INTERNAL || str(a, "gen_ai.operation.name") != "execute_tool" || str(a, "gen_ai.tool.name") != "note" ||
				str(a, "gen_ai.tool.call.id") != "call_1" || str(a, "gen_ai.tool.type") != "function" || str(a, "error.type") != "tool_error" ||
				s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || s.Status.GetMessage() != "tool_error" {
				t.Errorf("execute_tool: kind %v status %v attributes %v", s.Kind, s.Status, a)
			}
		}
		if (a["error.type"] != nil) != (s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR) {
			t.Errorf("%s: error.type %v with status %v: a failed span has both, a good one neither", s.Name, a["error.type"], s.Status)
		}
	}
	if len(chats) == 2 {
		first, second := attrsOf(chats[0]), attrsOf(chats[1])
		if num(first, "gen_ai.usage.input_tokens") != 100 || num(first, "gen_ai.usage.output_tokens") != 10 ||
			num(second, "gen_ai.usage.input_tokens") != 120 || num(second, "gen_ai.usage.output_tokens") != 5 {
			t.Errorf("usage: %v / %v", first, second)
		}
		if r := first["gen_ai.response.finish_reasons"].GetArrayValue().GetValues(); len(r) != 1 || r[0].GetStringValue() != "toolUse" {
			t.Errorf("first finish reasons %v", r)
		}
		// The tool runs after the request that asked for it and before the next one.
		if toolSpan != nil && (toolSpan.StartTimeUnixNano < chats[0].EndTimeUnixNano || toolSpan.EndTimeUnixNano > chats[1].StartTimeUnixNano) {
			t.Errorf("execute_tool ran %d..%d, outside the chats' gap %d..%d", toolSpan.StartTimeUnixNano, toolSpan.EndTimeUnixNano,
				chats[0].EndTimeUnixNano, chats[1].StartTimeUnixNano)
		}
	}
	if resource["service.name"].GetStringValue() != "rein-ci" || resource["service.version"].GetStringValue() != "v9.9.9" {
		t.Errorf("resource %v", resource)
	}
	for k := range resource {
		if strings.HasPrefix(k, "process.") || strings.HasPrefix(k, "host.") {
			t.Errorf("resource attribute %s exported; the process and host detectors must stay off", k)
		}
	}
}

// TestProviderFinishReasons checks that a chat span carries the provider's own finish reason
// (Chat Completions' "tool_calls", not rein's "toolUse") and the provider's host and port.
func TestProviderFinishReasons(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chattest.SSE(chattest.Role, chattest.CallStart(0, "call_1", "read"), chattest.CallArgs(0, `{}`),
			chattest.Finish("tool_calls"), chattest.Usage(12, 5, 0)))
	}))
	defer srv.Close()
	m, err := openaicompat.New(openaicompat.Config{Model: "llama", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{t: t}
	col := httptest.NewServer(rc)
	defer col.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", col.URL+"/v1/traces")
	tr, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP})
	if err != nil {
		t.Fatal(err)
	}
	inst := tr.Instrument(telemetry.Subject{Provider: llm.ProviderOpenAICompat, Model: "llama", BaseURL: srv.URL + "/v1"})
	msg := inst.Model(m).Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}, func(llm.Event) {})
	if msg.StopReason != llm.StopToolUse {
		t.Fatalf("stop %s: %v", msg.StopReason, msg.Err)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans, _ := rc.spans()
	if len(spans) != 1 || spans[0].Name != telemetry.ChatSpan("llama") || spans[0].Name != "chat llama" {
		t.Fatalf("spans %v", spans)
	}
	a := attrsOf(spans[0])
	var reasons []string
	for _, v := range a["gen_ai.response.finish_reasons"].GetArrayValue().GetValues() {
		reasons = append(reasons, v.GetStringValue())
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	if !slices.Equal(reasons, []string{"tool_calls"}) || a["server.address"].GetStringValue() != host ||
		strconv.FormatInt(a["server.port"].GetIntValue(), 10) != port ||
		a["gen_ai.usage.input_tokens"].GetIntValue() != 12 || a["gen_ai.usage.output_tokens"].GetIntValue() != 5 {
		t.Errorf("chat attributes %v", a)
	}
}

// TestOTLPSecretsNotInErrors checks that the errors of a bad configuration and of a failed
// export name the variable and the problem, never a header value or the endpoint's
// credentials or query.
func TestOTLPSecretsNotInErrors(t *testing.T) {
	for _, bad := range [][2]string{
		{"OTEL_EXPORTER_OTLP_HEADERS", "x-team=agents,Authorization " + secretHeader},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "=" + secretHeader},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318/" + secretURL},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://u:" + secretURL + "@collector"},
	} {
		t.Run(bad[0], func(t *testing.T) {
			t.Setenv(bad[0], bad[1])
			_, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP})
			if !errors.Is(err, telemetry.ErrConfig) || !strings.Contains(err.Error(), bad[0]) {
				t.Fatalf("%v, want a configuration error naming %s", err, bad[0])
			}
			if strings.Contains(err.Error(), "HEADERSECRET") || strings.Contains(err.Error(), secretURL) {
				t.Errorf("the error repeats the secret: %v", err)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "bad token")
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", strings.Replace(srv.URL, "http://", "http://u:"+secretURL+"@", 1)+"/v1/traces?token="+secretURL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization="+strings.ReplaceAll(secretHeader, " ", "%20"))
	tr, err := telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP})
	if err != nil {
		t.Fatal(err)
	}
	runNote(t, tr, "")
	err = tr.Shutdown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), srv.URL+"/v1/traces") {
		t.Fatalf("Shutdown: %v, want the 401 of %s reported", err, srv.URL)
	}
	if strings.Contains(err.Error(), secretURL) || strings.Contains(err.Error(), "HEADERSECRET") {
		t.Errorf("the export error repeats a secret: %v", err)
	}
	// A receiver that cannot be reached: the client's error names the URL too.
	srv.Close()
	tr, err = telemetry.New(context.Background(), telemetry.Config{Exporter: telemetry.ExportOTLP})
	if err != nil {
		t.Fatal(err)
	}
	runNote(t, tr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err = tr.Shutdown(ctx); err == nil || strings.Contains(err.Error(), secretURL) {
		t.Errorf("Shutdown with the receiver gone: %v", err)
	}
}
