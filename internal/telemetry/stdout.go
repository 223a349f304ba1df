package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// stdoutExporter writes each span as one JSON object on a line, in the shape the OpenTelemetry
// Go stdout exporter writes (same keys in the same order, same value types), so that tools
// reading `--trace stdout` or `--trace file:PATH` output keep working. stdout_test.go pins it.
type stdoutExporter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewStdoutExporter returns the exporter of --trace stdout and file:PATH, writing to w.
func NewStdoutExporter(w io.Writer) Exporter { return newStdoutExporter(w) }

func newStdoutExporter(w io.Writer) *stdoutExporter { return &stdoutExporter{enc: json.NewEncoder(w)} }

func (e *stdoutExporter) ExportSpans(_ context.Context, spans []*SpanRecord) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range spans {
		if err := e.enc.Encode(stdoutSpanOf(s)); err != nil {
			return fmt.Errorf("writing span %s: %w", s.Name, err)
		}
	}
	return nil
}

func (e *stdoutExporter) Shutdown(context.Context) error { return nil }

type stdoutSpan struct {
	Name                   string
	SpanContext            stdoutSpanContext
	Parent                 stdoutSpanContext
	SpanKind               int
	StartTime              time.Time
	EndTime                time.Time
	Attributes             []stdoutAttr
	Events                 []stdoutEvent
	Links                  []struct{} // rein makes no links: always null
	Status                 stdoutStatus
	DroppedAttributes      int
	DroppedEvents          int
	DroppedLinks           int
	ChildSpanCount         int
	Resource               []stdoutAttr
	InstrumentationScope   stdoutScope
	InstrumentationLibrary stdoutScope // the same scope, under the name older readers know
}

type stdoutSpanContext struct {
	TraceID    string
	SpanID     string
	TraceFlags string
	TraceState string
	Remote     bool
}

type stdoutAttr struct {
	Key   string
	Value stdoutValue
}

type stdoutValue struct {
	Type  string
	Value any
}

type stdoutEvent struct {
	Name                  string
	Attributes            []stdoutAttr
	DroppedAttributeCount int
	Time                  time.Time
}

type stdoutStatus struct {
	Code        string
	Description string
}

type stdoutScope struct {
	Name       string
	Version    string
	SchemaURL  string
	Attributes []stdoutAttr
}

func stdoutSpanOf(s *SpanRecord) stdoutSpan {
	out := stdoutSpan{
		Name:           s.Name,
		SpanContext:    stdoutSpanContext{TraceID: s.TraceID.String(), SpanID: s.SpanID.String(), TraceFlags: "01"},
		Parent:         stdoutSpanContext{TraceID: TraceID{}.String(), SpanID: s.Parent.String(), TraceFlags: "00"},
		SpanKind:       int(s.Kind),
		StartTime:      s.Start,
		EndTime:        s.End,
		Attributes:     stdoutAttrs(s.Attributes),
		Status:         stdoutStatus{Code: "Unset", Description: s.Status.Description},
		ChildSpanCount: s.ChildSpanCount,
	}
	if s.Parent.IsValid() {
		// A parent is local and in the same trace, and sampled: the child was.
		out.Parent.TraceID, out.Parent.TraceFlags = s.TraceID.String(), "01"
	}
	if s.Status.Code == StatusError {
		out.Status.Code = "Error"
	}
	for _, ev := range s.Events {
		out.Events = append(out.Events, stdoutEvent{Name: ev.Name, Attributes: stdoutAttrs(ev.Attributes), Time: ev.Time})
	}
	if s.Resource != nil {
		out.Resource = stdoutAttrs(s.Resource.Attributes)
	}
	out.InstrumentationScope = stdoutScope{Name: s.Scope.Name, Version: s.Scope.Version}
	out.InstrumentationLibrary = out.InstrumentationScope
	return out
}

func stdoutAttrs(attrs []Attr) []stdoutAttr {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]stdoutAttr, len(attrs))
	for i, a := range attrs {
		out[i] = stdoutAttr{Key: a.Key, Value: stdoutValue{Type: a.Value.Type().String(), Value: a.Value.AsInterface()}}
	}
	return out
}
