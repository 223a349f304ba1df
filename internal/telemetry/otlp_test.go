package telemetry

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestOTLPJSONEncoding checks the parts of the OTLP JSON mapping a run does not exercise:
// status codes renumbered, events, arrays, doubles, booleans, span kind and the parent id.
func TestOTLPJSONEncoding(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("1112131415161718")
	pid, _ := trace.SpanIDFromHex("2122232425262728")
	start := time.Unix(1700000000, 5)
	stub := tracetest.SpanStub{
		Name:        "s",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
		Parent:      trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: pid}),
		SpanKind:    trace.SpanKindClient,
		StartTime:   start,
		EndTime:     start.Add(time.Second),
		Attributes: []attribute.KeyValue{
			attribute.Float64("d", 1.5), attribute.Float64("nan", math.NaN()), attribute.Bool("b", true),
			attribute.Int64Slice("is", []int64{1, -2}), attribute.StringSlice("ss", []string{"x"}),
		},
		Events:   []sdktrace.Event{{Name: "e", Time: start, Attributes: []attribute.KeyValue{attribute.Int("n", 3)}}},
		Status:   sdktrace.Status{Code: codes.Error, Description: "boom"},
		Resource: resource.NewSchemaless(attribute.String("service.name", "x")),
	}
	b, err := json.Marshal(encodeSpans([]sdktrace.ReadOnlySpan{stub.Snapshot()}))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		`"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"x"}}]}`,
		`"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718"`,
		`"parentSpanId":"2122232425262728","flags":257,"name":"s","kind":3`,
		`"startTimeUnixNano":"1700000000000000005","endTimeUnixNano":"1700000001000000005"`,
		`{"key":"d","value":{"doubleValue":1.5}}`, `{"key":"nan","value":{"doubleValue":"NaN"}}`,
		`{"key":"b","value":{"boolValue":true}}`,
		`{"key":"is","value":{"arrayValue":{"values":[{"intValue":"1"},{"intValue":"-2"}]}}}`,
		`{"key":"ss","value":{"arrayValue":{"values":[{"stringValue":"x"}]}}}`,
		`"events":[{"timeUnixNano":"1700000000000000005","name":"e","attributes":[{"key":"n","value":{"intValue":"3"}}]}]`,
		`"status":{"code":2,"message":"boom"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
}

// TestOTLPConfig checks the environment the exporter reads.
func TestOTLPConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	e, err := newOTLPExporter(env())
	if err != nil || e.url != DefaultOTLPEndpoint || e.gzip || e.client.Timeout != 10*time.Second {
		t.Errorf("defaults: %+v, %v", e, err)
	}
	e, err = newOTLPExporter(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b/t",
		"OTEL_EXPORTER_OTLP_HEADERS", "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=2", "OTEL_EXPORTER_OTLP_TIMEOUT", "1500",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"))
	if err != nil || e.url != "https://b/t" || len(e.headers) != 1 || e.headers["b"] != "2" || e.client.Timeout != 1500*time.Millisecond {
		t.Errorf("traces variables: %+v, %v", e, err)
	}
	for _, bad := range [][]string{
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "novalue"},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent.pem"},
		{"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem"},
	} {
		if _, err := newOTLPExporter(env(bad...)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s=%s: %v, want a configuration error", bad[0], bad[1], err)
		}
	}
}

// TestServerAttributes checks server.address and server.port: the provider's default
// endpoint, a given one (host and port only), none for the script model.
func TestServerAttributes(t *testing.T) {
	for _, tc := range []struct{ provider, baseURL, want string }{
		{"anthropic", "", "server.address=api.anthropic.com server.port=443"},
		{"openai", "", "server.address=api.openai.com server.port=443"},
		{"openai-compat", "http://localhost:11434/v1", "server.address=localhost server.port=11434"},
		{"openai-compat", "http://[::1]/v1", "server.address=::1 server.port=80"},
		{"openai", "https://u:secret@proxy.example/v1?key=secret", "server.address=proxy.example server.port=443"},
		{"script", "", ""},
		{"openai-compat", "not a url", ""},
	} {
		var got []string
		for _, a := range server(tc.provider, tc.baseURL) {
			got = append(got, string(a.kv.Key)+"="+a.kv.Value.String())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s %q: %v, want %s", tc.provider, tc.baseURL, got, tc.want)
		}
	}
}

// BenchmarkOTLPEncode measures encoding one batch of 100 spans of a run's shape in each OTLP
// encoding.
func BenchmarkOTLPEncode(b *testing.B) {
	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	res := resource.NewSchemaless(attribute.String("service.name", "rein"))
	spans := make([]sdktrace.ReadOnlySpan, 100)
	for i := range spans {
		var sid trace.SpanID
		sid[7] = byte(i + 1)
		stub := tracetest.SpanStub{Name: "chat claude-sonnet-4-5", Resource: res, StartTime: time.Unix(1700000000, 0), EndTime: time.Unix(1700000001, 0),
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "claude-sonnet-4-5"),
				attribute.Int("gen_ai.usage.input_tokens", 1200), attribute.Int("gen_ai.usage.output_tokens", 80), attribute.StringSlice("gen_ai.response.finish_reasons", []string{"end_turn"})}}
		spans[i] = stub.Snapshot()
	}
	b.Run("protobuf", func(b *testing.B) {
		for b.Loop() {
			marshalProto(encodeSpans(spans))
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(encodeSpans(spans)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
