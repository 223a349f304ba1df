package openaicompat

import "github.com/reinhq/rein/internal/llm"

// Helpers of the tests: the body as one buffer, which Stream never builds (it sends the
// writer's segments).

// encodeBody encodes a request as a Chat Completions body, "stream": true included, as one
// contiguous buffer appended to b (nil: a new buffer of about the right size). Stream sends
// the same bytes without joining them ([writeBody]).
func encodeBody(b []byte, cfg *Config, req *llm.Request, schemas *schemaCache, msgs *msgCache) ([]byte, *llm.Error) {
	if b == nil {
		b = make([]byte, 0, bodySize(req))
	}
	w := &bodyWriter{b: b}
	if err := writeBody(w, cfg, req, schemas, msgs); err != nil {
		return nil, err
	}
	return w.join(), nil
}

// bodySize guesses the body's size, to allocate it once.
func bodySize(req *llm.Request) int { return 4096 + estimateSize(req) }

// estimateSize guesses the size of the request's content.
func estimateSize(req *llm.Request) int {
	n := len(req.System)
	for i := range req.Messages {
		for _, p := range req.Messages[i].Content {
			n += 64 + len(p.Text) + len(p.Data)*4/3
			if p.Call != nil {
				n += len(p.Call.Arguments)
			}
		}
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Description) + len(t.Schema)
	}
	return n + n/16
}

// join returns the body as one buffer.
func (w *bodyWriter) join() []byte {
	if len(w.spans) == 0 {
		return w.b
	}
	segs, n := w.segments()
	out := make([]byte, 0, n)
	for _, s := range segs {
		out = append(out, s...)
	}
	return out
}
