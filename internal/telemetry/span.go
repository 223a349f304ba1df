package telemetry

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"
)

// span is an open span. It is the only code that writes to a span: names come from the Span*
// constants, attributes are attrs, and a status description is an enumerated value. A span
// the sampler left out (and a nil *span) ignores everything but still parents its children,
// which inherit the decision under a parent-based sampler.
type span struct {
	t       *Tracer
	traceID TraceID
	id      SpanID
	sampled bool

	mu    sync.Mutex
	ended bool
	rec   SpanRecord // what is recorded so far; only when sampled
}

// start opens a span under parent (a new root, in a new trace, when parent is nil).
func (t *Tracer) start(parent *span, name string, kind SpanKind, attrs ...attr) *span {
	s := &span{t: t, id: newSpanID()}
	if parent != nil {
		s.traceID = parent.traceID
	} else {
		s.traceID = newTraceID()
	}
	s.sampled = t.sampler.sample(parent, s.traceID)
	if parent != nil {
		parent.addChild()
	}
	if !s.sampled {
		return s
	}
	s.rec = SpanRecord{Name: name, TraceID: s.traceID, SpanID: s.id, Kind: kind, Start: time.Now(),
		Resource: t.resource, Scope: t.scope, Attributes: make([]Attr, 0, len(attrs)+6)}
	if parent != nil {
		s.rec.Parent = parent.id
	}
	s.setLocked(attrs)
	return s
}

// newTraceID and newSpanID draw random, non-zero ids from the runtime's generator (unique,
// not secret).
func newTraceID() TraceID {
	var id TraceID
	for id == (TraceID{}) {
		binary.BigEndian.PutUint64(id[:8], rand.Uint64())
		binary.BigEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

func newSpanID() SpanID {
	var id SpanID
	for id == (SpanID{}) {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

// recording reports whether writes to s are kept; callers hold s.mu.
func (s *span) recording() bool { return s != nil && s.sampled && !s.ended }

func (s *span) addChild() {
	s.mu.Lock()
	if s.recording() {
		s.rec.ChildSpanCount++
	}
	s.mu.Unlock()
}

func (s *span) set(attrs ...attr) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.recording() {
		s.setLocked(attrs)
	}
	s.mu.Unlock()
}

// setLocked sets attrs: a key already set keeps its place and takes the new value.
func (s *span) setLocked(attrs []attr) {
next:
	for _, a := range attrs {
		for i := range s.rec.Attributes {
			if s.rec.Attributes[i].Key == a.kv.Key {
				s.rec.Attributes[i].Value = a.kv.Value
				continue next
			}
		}
		s.rec.Attributes = append(s.rec.Attributes, a.kv)
	}
}

func (s *span) event(name string, attrs ...attr) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.recording() {
		s.rec.Events = append(s.rec.Events, Event{Name: name, Time: time.Now(), Attributes: kvs(attrs)})
	}
	s.mu.Unlock()
}

func kvs(attrs []attr) []Attr {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]Attr, len(attrs))
	for i, a := range attrs {
		out[i] = a.kv
	}
	return out
}

// fail marks the span as failed, with reason as its error.type and status description; reason
// is an enumerated value (an outcome, a status, an error kind), never an error message.
func (s *span) fail(reason string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.recording() {
		s.setLocked([]attr{constant(ErrorType, reason)})
		s.rec.Status = Status{Code: StatusError, Description: reason}
	}
	s.mu.Unlock()
}

// end ends the span and hands its record to the processor; a second end does nothing.
func (s *span) end() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.recording() {
		s.ended = true
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.rec.End = s.rec.Start.Add(time.Since(s.rec.Start)) // monotonic: never before the start
	rec := s.rec
	s.rec = SpanRecord{}
	s.mu.Unlock()
	s.t.proc.onEnd(&rec)
}
