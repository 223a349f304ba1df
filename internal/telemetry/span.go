package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// span is an open span. It is the only code that writes to an OpenTelemetry span: names come
// from the Span* constants, attributes are attrs, and a status description is an enumerated
// value. A nil *span ignores everything.
type span struct{ s trace.Span }

// start opens a span under parent (a new root when parent is nil).
func (t *Tracer) start(parent *span, name string, kind trace.SpanKind, attrs ...attr) *span {
	ctx := context.Background()
	if parent != nil {
		ctx = trace.ContextWithSpan(ctx, parent.s)
	}
	_, s := t.tr.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(kvs(attrs)...))
	return &span{s}
}

func kvs(attrs []attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(attrs))
	for i, a := range attrs {
		out[i] = a.kv
	}
	return out
}

func (s *span) set(attrs ...attr) {
	if s != nil {
		s.s.SetAttributes(kvs(attrs)...)
	}
}

func (s *span) event(name string, attrs ...attr) {
	if s != nil {
		s.s.AddEvent(name, trace.WithAttributes(kvs(attrs)...))
	}
}

// fail marks the span as failed, with reason as its error.type and status description; reason
// is an enumerated value (an outcome, a status, an error kind), never an error message.
func (s *span) fail(reason string) {
	if s != nil {
		s.s.SetAttributes(constant(ErrorType, reason).kv)
		s.s.SetStatus(codes.Error, reason)
	}
}

func (s *span) end() {
	if s != nil {
		s.s.End()
	}
}

// context returns ctx carrying the span, so that a library tracing under the current span
// nests under it.
func (s *span) context(ctx context.Context) context.Context {
	if s == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, s.s)
}
