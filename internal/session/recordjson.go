package session

import (
	"github.com/reinhq/rein/internal/jsonenc"
	"github.com/reinhq/rein/internal/kernel"
)

// The record bodies encode themselves (the ledger calls AppendJSON when a body has it): the
// same bytes json.Marshal writes (recordjson_test.go checks it over bodies with every field
// set), without the reflection encoders encoding/json builds for each type on its first use,
// which a new process paid between recording the user's message and the model-call intent.

// AppendJSON appends the body's JSON encoding to b.
func (e entryBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"lane":`...), e.Lane)
	b = optString(b, `,"intent":`, e.Intent)
	if e.Message != nil {
		var err error
		if b, err = e.Message.AppendJSON(append(b, `,"message":`...)); err != nil {
			return b, err
		}
	}
	b = optString(b, `,"blob":`, e.Blob)
	b = optString(b, `,"queued":`, e.Queued)
	if e.Compaction != nil {
		b = appendCompaction(append(b, `,"compaction":`...), e.Compaction)
	}
	if e.Usage != nil {
		var err error
		if b, err = e.Usage.AppendJSON(append(b, `,"usage":`...)); err != nil {
			return b, err
		}
	}
	if e.Forked {
		b = append(b, `,"forked":true`...)
	}
	return append(b, '}'), nil
}

func appendCompaction(b []byte, c *kernel.CompactionInfo) []byte {
	b = jsonenc.String(append(b, `{"firstKeptId":`...), c.FirstKeptID)
	b = jsonenc.Int(append(b, `,"tokensBefore":`...), int64(c.TokensBefore))
	return append(b, '}')
}

// AppendJSON appends the body's JSON encoding to b.
func (in intentBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"lane":`...), in.Lane)
	b = jsonenc.String(append(b, `,"kind":`...), string(in.Kind))
	b = jsonenc.Int(append(b, `,"turn":`...), int64(in.Turn))
	b = jsonenc.Strings(append(b, `,"reserved":`...), in.Reserved)
	if in.Call != nil {
		b = in.Call.AppendJSON(append(b, `,"call":`...))
	}
	b = optString(b, `,"callBlob":`, in.CallBlob)
	b = optInt(b, `,"index":`, in.Index)
	b = optString(b, `,"replay":`, string(in.Replay))
	b = optInt(b, `,"attempt":`, in.Attempt)
	if in.Retry != nil {
		b = jsonenc.Int(append(b, `,"retry":{"maxAttempts":`...), int64(in.Retry.MaxAttempts))
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// AppendJSON appends the body's JSON encoding to b.
func (a attemptBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"intent":`...), a.Intent)
	b = jsonenc.Int(append(b, `,"attempt":`...), int64(a.Attempt))
	return append(b, '}'), nil
}

// AppendJSON appends the body's JSON encoding to b.
func (c closedBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"intent":`...), c.Intent)
	b = jsonenc.String(append(b, `,"action":`...), c.Action)
	b = optString(b, `,"reason":`, c.Reason)
	if c.Usage != nil {
		var err error
		if b, err = c.Usage.AppendJSON(append(b, `,"usage":`...)); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// AppendJSON appends the body's JSON encoding to b.
func (c cancelBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"lane":`...), c.Lane)
	b = jsonenc.Strings(append(b, `,"intents":`...), c.Intents)
	b = optString(b, `,"reason":`, c.Reason)
	return append(b, '}'), nil
}

// AppendJSON appends the body's JSON encoding to b.
func (r runBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"lane":`...), r.Lane)
	b = jsonenc.String(append(b, `,"event":`...), r.Event)
	b = optString(b, `,"status":`, r.Status)
	return append(b, '}'), nil
}

// AppendJSON appends the body's JSON encoding to b.
func (f factBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"key":`...), f.Key)
	b = jsonenc.String(append(b, `,"value":`...), f.Value)
	b = optString(b, `,"blob":`, f.Blob)
	return append(b, '}'), nil
}

// AppendJSON appends the body's JSON encoding to b.
func (l laneBody) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"name":`...), l.Name)
	b = jsonenc.String(append(b, `,"leaf":`...), l.Leaf)
	return append(b, '}'), nil
}

// AppendJSON appends the hook run's JSON encoding to b.
func (h HookRun) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"lane":`...), h.Lane)
	b = jsonenc.String(append(b, `,"hook":`...), h.Hook)
	b = jsonenc.String(append(b, `,"point":`...), h.Point)
	b = jsonenc.String(append(b, `,"outcome":`...), h.Outcome)
	if h.FailClosed {
		b = append(b, `,"failClosed":true`...)
	}
	b = jsonenc.Int(append(b, `,"durationMs":`...), h.DurationMs)
	b = optString(b, `,"detail":`, h.Detail)
	return append(b, '}'), nil
}

// optString appends an omitempty string member (name with its leading comma) unless s is "".
func optString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return jsonenc.String(append(b, name...), s)
}

// optInt appends an omitempty number member (name with its leading comma) unless n is 0.
func optInt(b []byte, name string, n int) []byte {
	if n == 0 {
		return b
	}
	return jsonenc.Int(append(b, name...), int64(n))
}
