package telemetry

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// ids parses a trace id and a span id written in hex.
func ids(t testing.TB, trace, span string) (TraceID, SpanID) {
	var tid TraceID
	var sid SpanID
	if n, err := hex.Decode(tid[:], []byte(trace)); err != nil || n != len(tid) {
		t.Fatalf("trace id %s: %v", trace, err)
	}
	if n, err := hex.Decode(sid[:], []byte(span)); err != nil || n != len(sid) {
		t.Fatalf("span id %s: %v", span, err)
	}
	return tid, sid
}

// TestOTLPJSONEncoding checks the parts of the OTLP JSON mapping a run does not exercise:
// status codes renumbered, events, arrays, doubles, booleans, span kind and the parent id.
func TestOTLPJSONEncoding(t *testing.T) {
	tid, sid := ids(t, "0102030405060708090a0b0c0d0e0f10", "1112131415161718")
	_, pid := ids(t, "0102030405060708090a0b0c0d0e0f10", "2122232425262728")
	start := time.Unix(1700000000, 5)
	rec := &SpanRecord{
		Name: "s", TraceID: tid, SpanID: sid, Parent: pid, Kind: KindClient,
		Start: start, End: start.Add(time.Second),
		Attributes: []Attr{
			{"d", floatValue(1.5)}, {"nan", floatValue(math.NaN())}, {"b", boolValue(true)},
			{"ss", stringsValue([]string{"x", "y"})},
		},
		Events:   []Event{{Name: "e", Time: start, Attributes: []Attr{{"n", intValue(3)}}}},
		Status:   Status{Code: StatusError, Description: "boom"},
		Resource: &Resource{Attributes: []Attr{{"service.name", stringValue("x")}}},
	}
	b, err := json.Marshal(encodeSpans([]*SpanRecord{rec}))
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
		`{"key":"ss","value":{"arrayValue":{"values":[{"stringValue":"x"},{"stringValue":"y"}]}}}`,
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
			got = append(got, a.kv.Key+"="+a.kv.Value.String())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s %q: %v, want %s", tc.provider, tc.baseURL, got, tc.want)
		}
	}
}

// BenchmarkOTLPEncode measures encoding one batch of 100 spans of a run's shape in each OTLP
// encoding.
func BenchmarkOTLPEncode(b *testing.B) {
	tid, _ := ids(b, "0102030405060708090a0b0c0d0e0f10", "0000000000000001")
	res := &Resource{Attributes: []Attr{{"service.name", stringValue("rein")}}}
	spans := make([]*SpanRecord, 100)
	for i := range spans {
		var sid SpanID
		sid[7] = byte(i + 1)
		spans[i] = &SpanRecord{Name: "chat claude-sonnet-4-5", Resource: res, Start: time.Unix(1700000000, 0), End: time.Unix(1700000001, 0),
			TraceID: tid, SpanID: sid,
			Attributes: []Attr{{"gen_ai.operation.name", stringValue("chat")}, {"gen_ai.request.model", stringValue("claude-sonnet-4-5")},
				{"gen_ai.usage.input_tokens", intValue(1200)}, {"gen_ai.usage.output_tokens", intValue(80)},
				{"gen_ai.response.finish_reasons", stringsValue([]string{"end_turn"})}}}
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
