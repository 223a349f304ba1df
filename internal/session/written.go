package session

import (
	"bytes"
	"slices"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/jsonenc"
	"github.com/reinhq/rein/internal/llm"
)

// decodeRecord decodes a record body into v, a pointer to one of the body types. written is
// the body the record was encoded from when this process is writing it, else nil: a body
// that decodes to itself is then copied into v instead of decoded. The state holds the same
// value either way (written_test.go checks it against decoding); what is saved is the decode,
// and in a new process encoding/json's reflection over the body types on their first use
// (0.2–0.4 ms for an entry, paid between the user's message and the first model request).
func decodeRecord(raw []byte, written, v any) error {
	if written != nil && fromWritten(written, v) {
		return nil
	}
	return decodeBody(raw, v)
}

// fromWritten sets *v to a copy of w, which shares no slice or pointer with it, and reports
// true when w has v's type and decodes to itself: its strings are valid UTF-8 (encoding/json
// writes an invalid byte as U+FFFD) and its raw JSON compacts (the record holds it compacted).
func fromWritten(w, v any) bool {
	switch v := v.(type) {
	case *entryBody:
		b, ok := w.(entryBody)
		if !ok || !valid(b.Lane, b.Intent, b.Blob, b.Queued) {
			return false
		}
		if b.Message != nil {
			m, ok := writtenMessage(b.Message)
			if !ok {
				return false
			}
			b.Message = m
		}
		if b.Compaction != nil {
			if !valid(b.Compaction.FirstKeptID) {
				return false
			}
			c := *b.Compaction
			b.Compaction = &c
		}
		b.Usage = cloneUsage(b.Usage)
		*v = b
	case *intentBody:
		b, ok := w.(intentBody)
		if !ok || !valid(b.Lane, string(b.Kind), b.CallBlob, string(b.Replay)) || !valid(b.Reserved...) {
			return false
		}
		b.Reserved = slices.Clone(b.Reserved)
		if b.Call != nil {
			if b.Call, ok = writtenCall(b.Call); !ok {
				return false
			}
		}
		if b.Retry != nil {
			r := *b.Retry
			b.Retry = &r
		}
		*v = b
	default:
		return fromWrittenFlat(w, v)
	}
	return true
}

// fromWrittenFlat is fromWritten for the bodies of strings, numbers and usage.
func fromWrittenFlat(w, v any) bool {
	switch v := v.(type) {
	case *attemptBody:
		b, ok := w.(attemptBody)
		if !ok || !valid(b.Intent) {
			return false
		}
		*v = b
	case *closedBody:
		b, ok := w.(closedBody)
		if !ok || !valid(b.Intent, b.Action, b.Reason) {
			return false
		}
		b.Usage = cloneUsage(b.Usage)
		*v = b
	case *cancelBody:
		b, ok := w.(cancelBody)
		if !ok || !valid(b.Lane, b.Reason) || !valid(b.Intents...) {
			return false
		}
		b.Intents = slices.Clone(b.Intents)
		*v = b
	case *runBody:
		b, ok := w.(runBody)
		if !ok || !valid(b.Lane, b.Event, b.Status) {
			return false
		}
		*v = b
	case *factBody:
		b, ok := w.(factBody)
		if !ok || !valid(b.Key, b.Value, b.Blob) {
			return false
		}
		*v = b
	case *laneBody:
		b, ok := w.(laneBody)
		if !ok || !valid(b.Name, b.Leaf) {
			return false
		}
		*v = b
	default:
		return false
	}
	return true
}

// writtenMessage returns a copy of m as it decodes from its JSON, or false when that differs
// from m in more than the fields not recorded.
func writtenMessage(m *llm.Message) (*llm.Message, bool) {
	c := *m
	c.FinishReason, c.ID = "", "" // json:"-": never recorded
	if !valid(string(c.Role), c.Provider, c.API, c.Model, c.ResponseID, string(c.StopReason), c.ToolCallID, c.ToolName) {
		return nil, false
	}
	if c.Content != nil {
		c.Content = slices.Clone(c.Content)
		for i := range c.Content {
			p := &c.Content[i]
			if !valid(string(p.Type), p.Text, p.Signature, p.MIMEType) {
				return nil, false
			}
			if len(p.Data) == 0 {
				p.Data = nil // omitted when empty: decodes as nil
			} else {
				p.Data = bytes.Clone(p.Data)
			}
			if p.Call != nil {
				var ok bool
				if p.Call, ok = writtenCall(p.Call); !ok {
					return nil, false
				}
			}
		}
	}
	c.Usage = cloneUsage(c.Usage)
	if c.Err != nil {
		if !valid(string(c.Err.Kind), c.Err.Message) {
			return nil, false
		}
		e := *c.Err
		c.Err = &e
	}
	if len(c.Details) == 0 {
		c.Details = nil // omitted when empty
	} else {
		// The record holds the details compacted and HTML-escaped; they decode as those bytes.
		d, err := jsonenc.Raw(nil, c.Details)
		if err != nil {
			return nil, false
		}
		c.Details = d
	}
	return &c, true
}

func writtenCall(call *llm.ToolCall) (*llm.ToolCall, bool) {
	if !valid(call.ID, call.Name, call.Arguments, call.ProviderID) {
		return nil, false
	}
	c := *call
	return &c, true
}

func cloneUsage(u *llm.Usage) *llm.Usage {
	if u == nil {
		return nil
	}
	c := *u
	return &c
}

// valid reports whether every s is valid UTF-8.
func valid(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}
