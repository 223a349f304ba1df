package llm

import (
	"fmt"

	"github.com/reinhq/rein/internal/jsonenc"
)

// The AppendJSON methods append a value's JSON encoding: exactly the bytes json.Marshal
// writes for it (json_test.go checks it over values with every field set), without the
// reflection encoders encoding/json builds on first use. Session ledgers record messages,
// tool calls and usage with them. A type whose encoding cannot fail returns no error; a
// Message's fails where json.Marshal's would: Details not valid JSON, a cost NaN or infinite.

// AppendJSON appends m's JSON encoding to b.
func (m *Message) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = jsonenc.String(b, string(m.Role))
	b = append(b, `,"content":`...)
	if m.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range m.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = m.Content[i].AppendJSON(b)
		}
		b = append(b, ']')
	}
	b = optString(b, `,"provider":`, m.Provider)
	b = optString(b, `,"api":`, m.API)
	b = optString(b, `,"model":`, m.Model)
	b = optString(b, `,"responseId":`, m.ResponseID)
	if m.Usage != nil {
		var err error
		if b, err = m.Usage.AppendJSON(append(b, `,"usage":`...)); err != nil {
			return b, err
		}
	}
	b = optString(b, `,"stopReason":`, string(m.StopReason))
	if m.Err != nil {
		b = m.Err.AppendJSON(append(b, `,"error":`...))
	}
	b = optString(b, `,"toolCallId":`, m.ToolCallID)
	b = optString(b, `,"toolName":`, m.ToolName)
	if m.IsError {
		b = append(b, `,"isError":true`...)
	}
	if len(m.Details) > 0 {
		var err error
		if b, err = jsonenc.Raw(append(b, `,"details":`...), m.Details); err != nil {
			return b, fmt.Errorf("llm: message details: %w", err)
		}
	}
	if m.Time != 0 {
		b = jsonenc.Int(append(b, `,"ts":`...), m.Time)
	}
	return append(b, '}'), nil
}

// AppendJSON appends p's JSON encoding to b.
func (p *Part) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = jsonenc.String(b, string(p.Type))
	b = optString(b, `,"text":`, p.Text)
	b = optString(b, `,"signature":`, p.Signature)
	if p.Redacted {
		b = append(b, `,"redacted":true`...)
	}
	b = optString(b, `,"mimeType":`, p.MIMEType)
	if len(p.Data) > 0 {
		b = jsonenc.Bytes(append(b, `,"data":`...), p.Data)
	}
	if p.Call != nil {
		b = p.Call.AppendJSON(append(b, `,"call":`...))
	}
	return append(b, '}')
}

// AppendJSON appends c's JSON encoding to b.
func (c *ToolCall) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.String(b, c.ID)
	b = append(b, `,"name":`...)
	b = jsonenc.String(b, c.Name)
	b = append(b, `,"arguments":`...)
	b = jsonenc.String(b, c.Arguments)
	b = optString(b, `,"providerId":`, c.ProviderID)
	return append(b, '}')
}

// AppendJSON appends u's JSON encoding to b; a cost that is NaN or infinite is refused.
func (u *Usage) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.Int(append(b, `{"input":`...), int64(u.Input))
	b = jsonenc.Int(append(b, `,"output":`...), int64(u.Output))
	b = jsonenc.Int(append(b, `,"cacheRead":`...), int64(u.CacheRead))
	b = jsonenc.Int(append(b, `,"cacheWrite":`...), int64(u.CacheWrite))
	b = append(b, `,"cost":`...)
	b, err := u.Cost.AppendJSON(b)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// AppendJSON appends c's JSON encoding to b; a NaN or infinite amount is refused.
func (c *Cost) AppendJSON(b []byte) ([]byte, error) {
	names := [...]string{`{"input":`, `,"output":`, `,"cacheRead":`, `,"cacheWrite":`, `,"total":`}
	for i, f := range [...]float64{c.Input, c.Output, c.CacheRead, c.CacheWrite, c.Total} {
		var err error
		if b, err = jsonenc.Float(append(b, names[i]...), f); err != nil {
			return b, fmt.Errorf("llm: usage cost: %w", err)
		}
	}
	return append(b, '}'), nil
}

// AppendJSON appends e's JSON encoding to b.
func (e *Error) AppendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = jsonenc.String(b, string(e.Kind))
	if e.Status != 0 {
		b = jsonenc.Int(append(b, `,"status":`...), int64(e.Status))
	}
	b = append(b, `,"message":`...)
	b = jsonenc.String(b, e.Message)
	if e.Retryable {
		b = append(b, `,"retryable":true`...)
	}
	if e.RetryAfterMs != 0 {
		b = jsonenc.Int(append(b, `,"retryAfterMs":`...), e.RetryAfterMs)
	}
	return append(b, '}')
}

// optString appends an omitempty string member: name (with its leading comma) and s, unless
// s is empty.
func optString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return jsonenc.String(append(b, name...), s)
}
