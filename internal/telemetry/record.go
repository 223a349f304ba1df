package telemetry

import (
	"context"
	"encoding/hex"
	"time"
)

// Exporter receives finished spans: the batch processor hands it a batch at a time, from one
// goroutine; [Config.Export] gets each span as it ends, on the goroutine that ended it. A
// returned error is counted and reported by [Tracer.Shutdown]. The spans are read-only and
// shared with any other exporter.
type Exporter interface {
	ExportSpans(ctx context.Context, spans []*SpanRecord) error
	Shutdown(ctx context.Context) error
}

// SpanRecord is one finished, sampled span.
type SpanRecord struct {
	Name    string
	TraceID TraceID
	SpanID  SpanID
	// Parent is the parent span's id; zero for a root span. Parents are always local (rein
	// propagates no trace context) and in the same trace.
	Parent     SpanID
	Kind       SpanKind
	Start, End time.Time
	// Attributes in the order their keys were first set, each with its last value.
	Attributes []Attr
	Events     []Event
	Status     Status
	// ChildSpanCount is the number of spans started under this one while it was open.
	ChildSpanCount int
	Resource       *Resource
	Scope          Scope
}

// Attr returns the value of the attribute key, and whether the span has it.
func (s *SpanRecord) Attr(key string) (Value, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value, true
		}
	}
	return Value{}, false
}

// TraceID is a W3C trace id.
type TraceID [16]byte

// SpanID is a W3C span (parent) id.
type SpanID [8]byte

func (id TraceID) String() string { return hex.EncodeToString(id[:]) }
func (id SpanID) String() string  { return hex.EncodeToString(id[:]) }

// IsValid reports whether id is set (an all-zero id is no id).
func (id SpanID) IsValid() bool { return id != SpanID{} }

// SpanKind numbers span kinds as OTLP does.
type SpanKind int

const (
	KindInternal SpanKind = 1
	KindClient   SpanKind = 3
)

// StatusCode is a span's status: unset, or error (rein sets no other).
type StatusCode int

const (
	StatusUnset StatusCode = iota
	StatusError
)

// Status is a span's status; Description is an enumerated value, and only an error has one.
type Status struct {
	Code        StatusCode
	Description string
}

// Event is a span event.
type Event struct {
	Name       string
	Time       time.Time
	Attributes []Attr
}

// Scope is the instrumentation scope of rein's spans.
type Scope struct{ Name, Version string }

// Resource is what the spans of one tracer describe: its attributes, sorted by key.
type Resource struct{ Attributes []Attr }
