package telemetry

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"
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

// Span flags of OTLP: the W3C trace flags in the low byte (every exported span is sampled),
// and that the parent is known to be local (rein propagates no trace context).
const (
	otlpFlagSampled      = 0x01
	otlpFlagsHasIsRemote = 0x100
)

// encodeSpans groups spans by resource and instrumentation scope.
func encodeSpans(spans []*SpanRecord) *otlpRequest {
	type scopeKey struct {
		res   *Resource
		scope Scope
	}
	req := &otlpRequest{}
	resources := map[*Resource]*otlpResourceSpans{}
	scopes := map[scopeKey]*otlpScopeSpans{}
	for _, s := range spans {
		rs := resources[s.Resource]
		if rs == nil {
			rs = &otlpResourceSpans{}
			if s.Resource != nil {
				rs.Resource.Attributes = otlpAttrs(s.Resource.Attributes)
			}
			resources[s.Resource] = rs
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		sk := scopeKey{s.Resource, s.Scope}
		ss := scopes[sk]
		if ss == nil {
			ss = &otlpScopeSpans{Scope: otlpScope{Name: s.Scope.Name, Version: s.Scope.Version}}
			scopes[sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, encodeSpan(s))
	}
	return req
}

func encodeSpan(s *SpanRecord) otlpSpan {
	out := otlpSpan{
		TraceID:           s.TraceID[:],
		SpanID:            s.SpanID[:],
		Flags:             otlpFlagSampled | otlpFlagsHasIsRemote,
		Name:              s.Name,
		Kind:              int(s.Kind), // SpanKind numbers the kinds as OTLP does
		StartTimeUnixNano: unixNano(s.Start),
		EndTimeUnixNano:   unixNano(s.End),
		Attributes:        otlpAttrs(s.Attributes),
		Status:            otlpStatus{Message: s.Status.Description},
	}
	if s.Parent.IsValid() {
		out.ParentSpanID = s.Parent[:]
	}
	if s.Status.Code == StatusError {
		out.Status.Code = 2 // STATUS_CODE_ERROR
	}
	for _, ev := range s.Events {
		out.Events = append(out.Events, otlpEvent{TimeUnixNano: unixNano(ev.Time), Name: ev.Name, Attributes: otlpAttrs(ev.Attributes)})
	}
	return out
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func otlpAttrs(kvs []Attr) []otlpKeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]otlpKeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = otlpKeyValue{Key: kv.Key, Value: otlpValue(kv.Value)}
	}
	return out
}

func otlpValue(v Value) otlpAnyValue {
	switch v.Type() {
	case TypeBool:
		b := v.AsBool()
		return otlpAnyValue{BoolValue: &b}
	case TypeInt64:
		i := v.AsInt64()
		return otlpAnyValue{IntValue: &i}
	case TypeFloat64:
		d := otlpDouble(v.AsFloat64())
		return otlpAnyValue{DoubleValue: &d}
	case TypeString:
		s := v.AsString()
		return otlpAnyValue{StringValue: &s}
	case TypeStringSlice:
		a := &otlpValues{Values: make([]otlpAnyValue, len(v.ss))}
		for i := range v.ss {
			a.Values[i] = otlpAnyValue{StringValue: &v.ss[i]}
		}
		return otlpAnyValue{ArrayValue: a}
	}
	return otlpAnyValue{}
}
