package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// OTLPProtocol is the only OTLP protocol rein speaks: OTLP/HTTP with the JSON encoding, which
// every OTLP/HTTP receiver must accept. It keeps gRPC and the protobuf runtime out of the
// binary.
const OTLPProtocol = "http/json"

// DefaultOTLPEndpoint is where spans go when no OTEL_EXPORTER_OTLP_*ENDPOINT is set.
const DefaultOTLPEndpoint = "http://localhost:4318/v1/traces"

// otlpExporter is an sdktrace.SpanExporter that POSTs each batch of spans as one OTLP
// ExportTraceServiceRequest in the protobuf JSON encoding.
type otlpExporter struct {
	url     string
	headers map[string]string
	gzip    bool
	client  *http.Client
}

// otlpEnv reads the traces-specific variable OTEL_EXPORTER_OTLP_TRACES_<name> if set, else
// OTEL_EXPORTER_OTLP_<name>, and says which one it read.
func otlpEnv(getenv func(string) string, name string) (value, variable string) {
	variable = "OTEL_EXPORTER_OTLP_TRACES_" + name
	if v := getenv(variable); v != "" {
		return v, variable
	}
	variable = "OTEL_EXPORTER_OTLP_" + name
	return getenv(variable), variable
}

// newOTLPExporter configures the exporter from the standard OTEL_EXPORTER_OTLP_* variables.
// Every error wraps ErrConfig.
func newOTLPExporter(getenv func(string) string) (*otlpExporter, error) {
	if p, v := otlpEnv(getenv, "PROTOCOL"); p != "" && p != OTLPProtocol {
		return nil, fmt.Errorf("%w: %s=%s: rein exports OTLP over HTTP with JSON only (%s)", ErrConfig, v, p, OTLPProtocol)
	}
	e := &otlpExporter{url: DefaultOTLPEndpoint, headers: map[string]string{}}
	if v := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		e.url = v
	} else if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		e.url = strings.TrimRight(v, "/") + "/v1/traces"
	}
	if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: OTLP endpoint %q: want an http:// or https:// URL", ErrConfig, e.url)
	}
	if h, v := otlpEnv(getenv, "HEADERS"); h != "" {
		for _, pair := range strings.Split(h, ",") {
			k, val, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, fmt.Errorf("%w: %s: %q is not key=value", ErrConfig, v, pair)
			}
			if dec, err := url.PathUnescape(strings.TrimSpace(val)); err == nil {
				val = dec
			}
			e.headers[k] = strings.TrimSpace(val)
		}
	}
	timeout := 10 * time.Second
	if t, v := otlpEnv(getenv, "TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%w: %s=%s: want a positive number of milliseconds", ErrConfig, v, t)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	switch c, v := otlpEnv(getenv, "COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("%w: %s=%s: want gzip or none", ErrConfig, v, c)
	}
	tlsConf, err := otlpTLS(getenv)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf
	}
	e.client = &http.Client{Transport: tr, Timeout: timeout}
	return e, nil
}

// otlpTLS builds the TLS configuration of OTEL_EXPORTER_OTLP_CERTIFICATE,
// _CLIENT_CERTIFICATE and _CLIENT_KEY; nil when none is set.
func otlpTLS(getenv func(string) string) (*tls.Config, error) {
	ca, caVar := otlpEnv(getenv, "CERTIFICATE")
	cert, certVar := otlpEnv(getenv, "CLIENT_CERTIFICATE")
	key, keyVar := otlpEnv(getenv, "CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrConfig, caVar, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: %s: no PEM certificate in %s", ErrConfig, caVar, ca)
		}
		conf.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%w: %s and %s go together", ErrConfig, certVar, keyVar)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%w: %s/%s: %w", ErrConfig, certVar, keyVar, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// ExportSpans sends spans in one request, retrying while the receiver says it is throttled or
// unavailable (429, 502, 503, 504) and ctx allows.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := json.Marshal(encodeSpans(spans))
	if err != nil {
		return fmt.Errorf("otlp: encoding spans: %w", err)
	}
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("otlp: gzip: %w", err)
		}
		body = buf.Bytes()
	}
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		retry, wait, err := e.post(ctx, body)
		if err == nil || !retry || attempt == 5 {
			return err
		}
		if wait <= 0 {
			wait, backoff = backoff, backoff*2
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// post sends one request; retry says whether the failure is worth another attempt, after
// wait if the receiver said how long (Retry-After).
func (e *otlpExporter) post(ctx context.Context, body []byte) (retry bool, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("otlp: %w", err)
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return ctx.Err() == nil, 0, fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, 0, nil
	}
	err = fmt.Errorf("otlp: %s: %s", e.url, resp.Status)
	if s := strings.TrimSpace(string(msg)); s != "" {
		err = fmt.Errorf("otlp: %s: %s: %s", e.url, resp.Status, s)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		return true, wait, err
	}
	return false, 0, err
}

// Shutdown releases the exporter's idle connections.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// The OTLP JSON encoding: the protobuf JSON mapping of ExportTraceServiceRequest
// (opentelemetry/proto/collector/trace/v1), with lowerCamelCase field names, trace and span
// ids as hex strings, enums as integers and 64-bit integers as strings.

type otlpRequest struct {
	ResourceSpans []*otlpResourceSpans `json:"resourceSpans"`
}

type otlpResourceSpans struct {
	Resource   otlpResource      `json:"resource"`
	ScopeSpans []*otlpScopeSpans `json:"scopeSpans"`
	SchemaURL  string            `json:"schemaUrl,omitempty"`
}

type otlpResource struct {
	Attributes []otlpKeyValue `json:"attributes,omitempty"`
}

type otlpScopeSpans struct {
	Scope     otlpScope  `json:"scope"`
	Spans     []otlpSpan `json:"spans"`
	SchemaURL string     `json:"schemaUrl,omitempty"`
}

type otlpScope struct {
	Name       string         `json:"name,omitempty"`
	Version    string         `json:"version,omitempty"`
	Attributes []otlpKeyValue `json:"attributes,omitempty"`
}

type otlpSpan struct {
	TraceID                string         `json:"traceId"`
	SpanID                 string         `json:"spanId"`
	TraceState             string         `json:"traceState,omitempty"`
	ParentSpanID           string         `json:"parentSpanId,omitempty"`
	Flags                  uint32         `json:"flags,omitempty"`
	Name                   string         `json:"name"`
	Kind                   int            `json:"kind"`
	StartTimeUnixNano      string         `json:"startTimeUnixNano"`
	EndTimeUnixNano        string         `json:"endTimeUnixNano"`
	Attributes             []otlpKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int            `json:"droppedAttributesCount,omitempty"`
	Events                 []otlpEvent    `json:"events,omitempty"`
	DroppedEventsCount     int            `json:"droppedEventsCount,omitempty"`
	Links                  []otlpLink     `json:"links,omitempty"`
	DroppedLinksCount      int            `json:"droppedLinksCount,omitempty"`
	Status                 otlpStatus     `json:"status"`
}

type otlpEvent struct {
	TimeUnixNano           string         `json:"timeUnixNano"`
	Name                   string         `json:"name"`
	Attributes             []otlpKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int            `json:"droppedAttributesCount,omitempty"`
}

type otlpLink struct {
	TraceID                string         `json:"traceId"`
	SpanID                 string         `json:"spanId"`
	TraceState             string         `json:"traceState,omitempty"`
	Attributes             []otlpKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int            `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32         `json:"flags,omitempty"`
}

type otlpStatus struct {
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

type otlpKeyValue struct {
	Key   string       `json:"key"`
	Value otlpAnyValue `json:"value"`
}

// otlpAnyValue holds exactly one of its fields, or none for an empty value.
type otlpAnyValue struct {
	StringValue *string        `json:"stringValue,omitempty"`
	BoolValue   *bool          `json:"boolValue,omitempty"`
	IntValue    string         `json:"intValue,omitempty"`
	DoubleValue *otlpDouble    `json:"doubleValue,omitempty"`
	ArrayValue  *otlpValues    `json:"arrayValue,omitempty"`
	KvlistValue *otlpKeyValues `json:"kvlistValue,omitempty"`
	BytesValue  string         `json:"bytesValue,omitempty"`
}

type otlpValues struct {
	Values []otlpAnyValue `json:"values,omitempty"`
}

type otlpKeyValues struct {
	Values []otlpKeyValue `json:"values,omitempty"`
}

// otlpDouble is a float64 as the protobuf JSON mapping writes it: a number, or "NaN",
// "Infinity" and "-Infinity".
type otlpDouble float64

func (d otlpDouble) MarshalJSON() ([]byte, error) {
	f := float64(d)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// Span flags of OTLP: the W3C trace flags in the low byte, and whether the parent is remote.
const (
	otlpFlagsHasIsRemote = 0x100
	otlpFlagsIsRemote    = 0x200
)

func otlpFlags(sc trace.SpanContext, remote bool) uint32 {
	f := uint32(sc.TraceFlags()) | otlpFlagsHasIsRemote
	if remote {
		f |= otlpFlagsIsRemote
	}
	return f
}

// encodeSpans groups spans by resource and instrumentation scope.
func encodeSpans(spans []sdktrace.ReadOnlySpan) *otlpRequest {
	type scopeKey struct {
		name, version, schema string
		attrs                 attribute.Distinct
	}
	req := &otlpRequest{}
	resources := map[attribute.Distinct]*otlpResourceSpans{}
	scopes := map[attribute.Distinct]map[scopeKey]*otlpScopeSpans{}
	for _, s := range spans {
		res := s.Resource()
		rk := res.Equivalent()
		rs := resources[rk]
		if rs == nil {
			rs = &otlpResourceSpans{Resource: otlpResource{Attributes: otlpAttrs(res.Attributes())}, SchemaURL: res.SchemaURL()}
			resources[rk], scopes[rk] = rs, map[scopeKey]*otlpScopeSpans{}
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		is := s.InstrumentationScope()
		sk := scopeKey{is.Name, is.Version, is.SchemaURL, is.Attributes.Equivalent()}
		ss := scopes[rk][sk]
		if ss == nil {
			ss = &otlpScopeSpans{Scope: otlpScope{Name: is.Name, Version: is.Version, Attributes: otlpAttrs(is.Attributes.ToSlice())}, SchemaURL: is.SchemaURL}
			scopes[rk][sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, encodeSpan(s))
	}
	return req
}

func encodeSpan(s sdktrace.ReadOnlySpan) otlpSpan {
	sc, parent := s.SpanContext(), s.Parent()
	out := otlpSpan{
		TraceID:                hex.EncodeToString(traceID(sc)),
		SpanID:                 hex.EncodeToString(spanID(sc)),
		TraceState:             sc.TraceState().String(),
		Flags:                  otlpFlags(sc, parent.IsRemote()),
		Name:                   s.Name(),
		Kind:                   int(s.SpanKind()), // trace.SpanKind numbers the kinds as OTLP does
		StartTimeUnixNano:      unixNano(s.StartTime()),
		EndTimeUnixNano:        unixNano(s.EndTime()),
		Attributes:             otlpAttrs(s.Attributes()),
		DroppedAttributesCount: s.DroppedAttributes(),
		DroppedEventsCount:     s.DroppedEvents(),
		DroppedLinksCount:      s.DroppedLinks(),
		Status:                 otlpStatus{Message: s.Status().Description},
	}
	if parent.HasSpanID() {
		out.ParentSpanID = hex.EncodeToString(spanID(parent))
	}
	switch s.Status().Code {
	case codes.Ok:
		out.Status.Code = 1 // STATUS_CODE_OK
	case codes.Error:
		out.Status.Code = 2 // STATUS_CODE_ERROR
	}
	for _, ev := range s.Events() {
		out.Events = append(out.Events, otlpEvent{
			TimeUnixNano:           unixNano(ev.Time),
			Name:                   ev.Name,
			Attributes:             otlpAttrs(ev.Attributes),
			DroppedAttributesCount: ev.DroppedAttributeCount,
		})
	}
	for _, l := range s.Links() {
		out.Links = append(out.Links, otlpLink{
			TraceID:                hex.EncodeToString(traceID(l.SpanContext)),
			SpanID:                 hex.EncodeToString(spanID(l.SpanContext)),
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             otlpAttrs(l.Attributes),
			DroppedAttributesCount: l.DroppedAttributeCount,
			Flags:                  otlpFlags(l.SpanContext, l.SpanContext.IsRemote()),
		})
	}
	return out
}

func traceID(sc trace.SpanContext) []byte { id := sc.TraceID(); return id[:] }
func spanID(sc trace.SpanContext) []byte  { id := sc.SpanID(); return id[:] }

func unixNano(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

func otlpAttrs(kvs []attribute.KeyValue) []otlpKeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]otlpKeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = otlpKeyValue{Key: string(kv.Key), Value: otlpValue(kv.Value)}
	}
	return out
}

func otlpValue(v attribute.Value) otlpAnyValue {
	switch v.Type() {
	case attribute.BOOL:
		b := v.AsBool()
		return otlpAnyValue{BoolValue: &b}
	case attribute.INT64:
		return otlpAnyValue{IntValue: strconv.FormatInt(v.AsInt64(), 10)}
	case attribute.FLOAT64:
		d := otlpDouble(v.AsFloat64())
		return otlpAnyValue{DoubleValue: &d}
	case attribute.STRING:
		s := v.AsString()
		return otlpAnyValue{StringValue: &s}
	case attribute.BOOLSLICE:
		return otlpArray(v.AsBoolSlice(), func(b bool) otlpAnyValue { return otlpAnyValue{BoolValue: &b} })
	case attribute.INT64SLICE:
		return otlpArray(v.AsInt64Slice(), func(i int64) otlpAnyValue { return otlpAnyValue{IntValue: strconv.FormatInt(i, 10)} })
	case attribute.FLOAT64SLICE:
		return otlpArray(v.AsFloat64Slice(), func(f float64) otlpAnyValue { d := otlpDouble(f); return otlpAnyValue{DoubleValue: &d} })
	case attribute.STRINGSLICE:
		return otlpArray(v.AsStringSlice(), func(s string) otlpAnyValue { return otlpAnyValue{StringValue: &s} })
	case attribute.SLICE:
		return otlpArray(v.AsSlice(), otlpValue)
	case attribute.BYTESLICE:
		b := v.AsByteSlice()
		if len(b) == 0 {
			return otlpAnyValue{}
		}
		return otlpAnyValue{BytesValue: base64.StdEncoding.EncodeToString(b)}
	case attribute.MAP:
		return otlpAnyValue{KvlistValue: &otlpKeyValues{Values: otlpAttrs(v.AsMap())}}
	}
	return otlpAnyValue{}
}

func otlpArray[T any](xs []T, value func(T) otlpAnyValue) otlpAnyValue {
	a := &otlpValues{Values: make([]otlpAnyValue, len(xs))}
	for i, x := range xs {
		a.Values[i] = value(x)
	}
	return otlpAnyValue{ArrayValue: a}
}
