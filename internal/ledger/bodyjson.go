package ledger

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/reinhq/rein/internal/jsonenc"
	"github.com/reinhq/rein/internal/strictjson"
)

// maxReusedBody bounds the encoding buffer a ledger keeps between records.
const maxReusedBody = 64 << 10

// jsonAppender is a body that encodes itself: AppendJSON appends exactly what json.Marshal
// would write for it (or fails where json.Marshal would), without encoding/json's reflection.
type jsonAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// encodeBody encodes a body: with its own AppendJSON when it has one, else with encoding/json,
// which compacts a json.RawMessage. Either way the result is then checked strictly (duplicate
// keys, invalid UTF-8 in raw JSON), so a line is never written that a reader would refuse.
// A body's own encoder appends to buf.
func encodeBody(buf []byte, body any) ([]byte, error) {
	var b []byte
	var err error
	if a, ok := body.(jsonAppender); ok {
		b, err = a.AppendJSON(buf)
	} else {
		b, err = json.Marshal(body)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: encode body: %w", err)
	}
	if err := strictjson.Check(b); err != nil {
		return nil, fmt.Errorf("ledger: body is not strict JSON: %w", err)
	}
	return b, nil
}

// AppendJSON appends the header's JSON encoding (json.Marshal's: bindings in key order).
func (h Header) AppendJSON(b []byte) ([]byte, error) {
	b = jsonenc.String(append(b, `{"type":`...), string(h.Type))
	b = jsonenc.String(append(b, `,"id":`...), h.ID)
	b = jsonenc.Int(append(b, `,"format":`...), int64(h.Format))
	if len(h.Bindings) > 0 {
		b = append(b, `,"bindings":{`...)
		for i, k := range slices.Sorted(maps.Keys(h.Bindings)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(jsonenc.String(b, k), ':')
			b = jsonenc.String(b, h.Bindings[k])
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}
