package telemetry

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// An OTLP ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1), built once per
// batch and written in either encoding: the protobuf JSON mapping (the struct tags and the
// json types below: lowerCamelCase names, trace and span ids as hex strings, enums as integers,
// 64-bit integers as strings) or the protobuf binary format (otlpproto.go, field numbers from
// the .proto files). Neither needs the protobuf runtime.

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
	TraceID                hexID          `json:"traceId"`
	SpanID                 hexID          `json:"spanId"`
	TraceState             string         `json:"traceState,omitempty"`
	ParentSpanID           hexID          `json:"parentSpanId,omitempty"`
	Flags                  uint32         `json:"flags,omitempty"`
	Name                   string         `json:"name"`
	Kind                   int            `json:"kind"`
	StartTimeUnixNano      uint64         `json:"startTimeUnixNano,string"`
	EndTimeUnixNano        uint64         `json:"endTimeUnixNano,string"`
	Attributes             []otlpKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int            `json:"droppedAttributesCount,omitempty"`
	Events                 []otlpEvent    `json:"events,omitempty"`
	DroppedEventsCount     int            `json:"droppedEventsCount,omitempty"`
	Links                  []otlpLink     `json:"links,omitempty"`
	DroppedLinksCount      int            `json:"droppedLinksCount,omitempty"`
	Status                 otlpStatus     `json:"status"`
}

type otlpEvent struct {
	TimeUnixNano           uint64         `json:"timeUnixNano,string"`
	Name                   string         `json:"name"`
	Attributes             []otlpKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int            `json:"droppedAttributesCount,omitempty"`
}

type otlpLink struct {
	TraceID                hexID          `json:"traceId"`
	SpanID                 hexID          `json:"spanId"`
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
	IntValue    *int64         `json:"intValue,omitempty,string"`
	DoubleValue *otlpDouble    `json:"doubleValue,omitempty"`
	ArrayValue  *otlpValues    `json:"arrayValue,omitempty"`
	KvlistValue *otlpKeyValues `json:"kvlistValue,omitempty"`
	BytesValue  []byte         `json:"bytesValue,omitempty"` // base64, as the JSON mapping writes bytes
}

type otlpValues struct {
	Values []otlpAnyValue `json:"values,omitempty"`
}

type otlpKeyValues struct {
	Values []otlpKeyValue `json:"values,omitempty"`
}

// hexID is a trace or span id; OTLP's JSON encoding writes it in hex, not base64.
type hexID []byte

func (id hexID) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, hex.EncodeToString(id)), nil
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
		TraceID:                traceID(sc),
		SpanID:                 spanID(sc),
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
		out.ParentSpanID = spanID(parent)
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
			TraceID:                traceID(l.SpanContext),
			SpanID:                 spanID(l.SpanContext),
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             otlpAttrs(l.Attributes),
			DroppedAttributesCount: l.DroppedAttributeCount,
			Flags:                  otlpFlags(l.SpanContext, l.SpanContext.IsRemote()),
		})
	}
	return out
}

func traceID(sc trace.SpanContext) hexID { id := sc.TraceID(); return id[:] }
func spanID(sc trace.SpanContext) hexID  { id := sc.SpanID(); return id[:] }

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
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
		i := v.AsInt64()
		return otlpAnyValue{IntValue: &i}
	case attribute.FLOAT64:
		d := otlpDouble(v.AsFloat64())
		return otlpAnyValue{DoubleValue: &d}
	case attribute.STRING:
		s := v.AsString()
		return otlpAnyValue{StringValue: &s}
	case attribute.BOOLSLICE:
		return otlpArray(v.AsBoolSlice(), func(b bool) otlpAnyValue { return otlpAnyValue{BoolValue: &b} })
	case attribute.INT64SLICE:
		return otlpArray(v.AsInt64Slice(), func(i int64) otlpAnyValue { return otlpAnyValue{IntValue: &i} })
	case attribute.FLOAT64SLICE:
		return otlpArray(v.AsFloat64Slice(), func(f float64) otlpAnyValue { d := otlpDouble(f); return otlpAnyValue{DoubleValue: &d} })
	case attribute.STRINGSLICE:
		return otlpArray(v.AsStringSlice(), func(s string) otlpAnyValue { return otlpAnyValue{StringValue: &s} })
	case attribute.SLICE:
		return otlpArray(v.AsSlice(), otlpValue)
	case attribute.BYTESLICE:
		return otlpAnyValue{BytesValue: v.AsByteSlice()}
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
