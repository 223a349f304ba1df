package telemetry

import (
	"encoding/binary"
	"math"
)

// The protobuf binary encoding of an otlpRequest, written by hand so that the binary links no
// protobuf runtime (and with it no gRPC): a handful of message types, each a list of fields in
// the order of its .proto file (opentelemetry/proto/{collector/trace,trace,common,resource}/v1).
// Proto3 rules: a scalar field at its zero value is left out, a repeated or message field is
// written per element. The tests decode the result with the official generated types.

// Wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// pb appends protobuf fields to a byte slice.
type pb []byte

func (b pb) tag(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }

func (b pb) varint(field int, v uint64) pb {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(b.tag(field, wireVarint), v)
}

func (b pb) fixed64(field int, v uint64) pb {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(b.tag(field, wireFixed64), v)
}

func (b pb) fixed32(field int, v uint32) pb {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(b.tag(field, wireFixed32), v)
}

func (b pb) bytes(field int, v []byte) pb {
	if len(v) == 0 {
		return b
	}
	return append(binary.AppendUvarint(b.tag(field, wireBytes), uint64(len(v))), v...)
}

func (b pb) str(field int, v string) pb {
	if v == "" {
		return b
	}
	return append(binary.AppendUvarint(b.tag(field, wireBytes), uint64(len(v))), v...)
}

// msg appends a message field, always (an empty message is still present), encoded by enc.
func (b pb) msg(field int, enc func(pb) pb) pb {
	body := enc(nil)
	return append(binary.AppendUvarint(b.tag(field, wireBytes), uint64(len(body))), body...)
}

// marshalProto encodes an ExportTraceServiceRequest.
func marshalProto(r *otlpRequest) []byte {
	var b pb
	for _, rs := range r.ResourceSpans {
		b = b.msg(1, rs.proto) // resource_spans
	}
	return b
}

func (rs *otlpResourceSpans) proto(b pb) pb {
	b = b.msg(1, func(b pb) pb { return keyValues(b, 1, rs.Resource.Attributes) }) // resource.attributes
	for _, ss := range rs.ScopeSpans {
		b = b.msg(2, ss.proto) // scope_spans
	}
	return b.str(3, rs.SchemaURL)
}

func (ss *otlpScopeSpans) proto(b pb) pb {
	b = b.msg(1, func(b pb) pb { // scope
		return keyValues(b.str(1, ss.Scope.Name).str(2, ss.Scope.Version), 3, ss.Scope.Attributes)
	})
	for i := range ss.Spans {
		b = b.msg(2, ss.Spans[i].proto) // spans
	}
	return b.str(3, ss.SchemaURL)
}

func (s *otlpSpan) proto(b pb) pb {
	b = b.bytes(1, s.TraceID).bytes(2, s.SpanID).str(3, s.TraceState).bytes(4, s.ParentSpanID).
		str(5, s.Name).varint(6, uint64(s.Kind)).fixed64(7, s.StartTimeUnixNano).fixed64(8, s.EndTimeUnixNano)
	b = keyValues(b, 9, s.Attributes).varint(10, uint64(s.DroppedAttributesCount))
	for _, ev := range s.Events {
		b = b.msg(11, func(b pb) pb {
			b = b.fixed64(1, ev.TimeUnixNano).str(2, ev.Name)
			return keyValues(b, 3, ev.Attributes).varint(4, uint64(ev.DroppedAttributesCount))
		})
	}
	b = b.varint(12, uint64(s.DroppedEventsCount))
	for _, l := range s.Links {
		b = b.msg(13, func(b pb) pb {
			b = b.bytes(1, l.TraceID).bytes(2, l.SpanID).str(3, l.TraceState)
			return keyValues(b, 4, l.Attributes).varint(5, uint64(l.DroppedAttributesCount)).fixed32(6, l.Flags)
		})
	}
	b = b.varint(14, uint64(s.DroppedLinksCount))
	b = b.msg(15, func(b pb) pb { return b.str(2, s.Status.Message).varint(3, uint64(s.Status.Code)) })
	return b.fixed32(16, s.Flags)
}

// keyValues appends a repeated KeyValue field.
func keyValues(b pb, field int, kvs []otlpKeyValue) pb {
	for _, kv := range kvs {
		b = b.msg(field, func(b pb) pb { return b.str(1, kv.Key).msg(2, kv.Value.proto) })
	}
	return b
}

// proto writes the one field of the AnyValue oneof that is set. A oneof member is written even
// at its zero value (false, 0, ""), which is how a set member is told from an empty value.
func (v otlpAnyValue) proto(b pb) pb {
	switch {
	case v.StringValue != nil:
		return append(binary.AppendUvarint(b.tag(1, wireBytes), uint64(len(*v.StringValue))), *v.StringValue...)
	case v.BoolValue != nil:
		n := uint64(0)
		if *v.BoolValue {
			n = 1
		}
		return binary.AppendUvarint(b.tag(2, wireVarint), n)
	case v.IntValue != nil:
		return binary.AppendUvarint(b.tag(3, wireVarint), uint64(*v.IntValue))
	case v.DoubleValue != nil:
		return binary.LittleEndian.AppendUint64(b.tag(4, wireFixed64), math.Float64bits(float64(*v.DoubleValue)))
	case v.ArrayValue != nil:
		return b.msg(5, func(b pb) pb {
			for _, x := range v.ArrayValue.Values {
				b = b.msg(1, x.proto)
			}
			return b
		})
	case v.KvlistValue != nil:
		return b.msg(6, func(b pb) pb { return keyValues(b, 1, v.KvlistValue.Values) })
	case len(v.BytesValue) > 0:
		return b.bytes(7, v.BytesValue)
	}
	return b
}
