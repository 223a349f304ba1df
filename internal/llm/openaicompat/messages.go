package openaicompat

import (
	"github.com/reinhq/rein/internal/jsonenc"
	"github.com/reinhq/rein/internal/llm"
)

// bodyWriter collects a body in pieces: what this request encodes goes to b, and the messages
// the cache already holds are referred to where they are (runs of the cache's history bytes),
// so a growing conversation neither encodes nor copies its earlier messages again.
type bodyWriter struct {
	b     []byte
	spans []span
	mark  int    // where the scratch piece not yet in spans starts in b
	hist  []byte // the cache's history bytes the hist spans refer to
}

// span is a piece of the body: b[from:to], or hist[from:to] when hist is set.
type span struct {
	hist     bool
	from, to int
}

// cached appends hist[from:to] to the body.
func (w *bodyWriter) cached(from, to int) {
	if from == to {
		return
	}
	if len(w.b) > w.mark {
		w.spans = append(w.spans, span{from: w.mark, to: len(w.b)})
		w.mark = len(w.b)
	}
	if n := len(w.spans); n > 0 && w.spans[n-1].hist && w.spans[n-1].to == from {
		w.spans[n-1].to = to
		return
	}
	w.spans = append(w.spans, span{hist: true, from: from, to: to})
}

// segments returns the body's pieces in order and its length.
func (w *bodyWriter) segments() ([][]byte, int) {
	if len(w.b) > w.mark {
		w.spans = append(w.spans, span{from: w.mark, to: len(w.b)})
		w.mark = len(w.b)
	}
	segs := make([][]byte, len(w.spans))
	n := 0
	for i, s := range w.spans {
		if s.hist {
			segs[i] = w.hist[s.from:s.to:s.to]
		} else {
			segs[i] = w.b[s.from:s.to:s.to]
		}
		n += s.to - s.from
	}
	return segs, n
}

// appendMessages appends the healed history as chat messages: the system prompt as role
// "system", user text and images, assistant text and tool calls (thinking is not sent back: the
// chat wire has no field for it), and tool results as role "tool". Images in tool results,
// which role "tool" cannot carry, follow the run of tool results as one user message. With a
// cache, messages the cache holds are neither encoded nor copied again, and those the request's
// lineage vouches for are not even read ([msgCache.vouched]).
func appendMessages(w *bodyWriter, req *llm.Request, cache *msgCache) {
	mw := &msgWriter{w: w, first: true}
	w.b = append(w.b, '[')
	if req.System != "" {
		mw.sep()
		w.b = append(w.b, `{"role":"system","content":`...)
		w.b = jsonenc.Text(w.b, req.System)
		w.b = append(w.b, '}')
	}
	if cache != nil {
		cache.mu.Lock()
		defer cache.mu.Unlock()
	}
	healed, vouched, mark := cache.vouched(req, req.Messages)
	for i := 0; i < len(healed); i++ {
		if i < vouched && !cache.entries[i].image {
			e := &cache.entries[i]
			if i >= cache.lastImage && len(mw.images) == 0 {
				// No image from here to the last vouched message: one run of the cache's bytes.
				mw.cached(e.from, cache.entries[vouched-1].to)
				i = vouched - 1
				continue
			}
			if llm.Role(e.role) != llm.RoleTool {
				mw.flush()
			}
			mw.cached(e.from, e.to)
			continue
		}
		m := &healed[i]
		if m.Role != llm.RoleTool {
			mw.flush()
		}
		switch {
		case withImages(m):
			cache.placeholder(i)
			mw.withImages(m)
		case cache == nil:
			mw.text(m)
		default:
			mw.cached(cache.encoding(i, m))
		}
	}
	mw.flush()
	if cache != nil {
		cache.truncate(len(healed))
		cache.remember(req.Lineage, mark)
		w.hist = cache.hist
	}
	w.b = append(w.b, ']')
}

// msgWriter writes the messages array of a body into w.
type msgWriter struct {
	w      *bodyWriter
	first  bool       // nothing written yet: the next message takes no comma
	images []llm.Part // images of the current run of tool results, sent after it
}

func (mw *msgWriter) sep() {
	if !mw.first {
		mw.w.b = append(mw.w.b, ',')
	}
	mw.first = false
}

// cached appends the cache's hist[from:to]: encodings each preceded by its comma.
func (mw *msgWriter) cached(from, to int) {
	if from == to {
		return
	}
	if mw.first {
		from++
	}
	mw.first = false
	mw.w.cached(from, to)
}

// text encodes a message without images (no cache).
func (mw *msgWriter) text(m *llm.Message) {
	mark, wasFirst := len(mw.w.b), mw.first
	mw.sep()
	start := len(mw.w.b)
	if mw.w.b = appendText(mw.w.b, m); len(mw.w.b) == start { // nothing of it can be sent
		mw.w.b, mw.first = mw.w.b[:mark], wasFirst
	}
}

// withImages encodes a user message or tool result holding images; a tool result's images
// wait for the end of its run of results (flush).
func (mw *msgWriter) withImages(m *llm.Message) {
	mw.sep()
	if m.Role == llm.RoleUser {
		mw.w.b = appendUser(mw.w.b, m.Content)
		return
	}
	text, imgs := splitImages(m.Content)
	if text == "" {
		text = "(image attached below)"
	}
	mw.w.b = appendTool(mw.w.b, text, m.ToolCallID)
	mw.images = append(mw.images, imgs...)
}

// flush sends the images of the run of tool results that just ended as one user message.
func (mw *msgWriter) flush() {
	if len(mw.images) == 0 {
		return
	}
	mw.sep()
	b := append(mw.w.b, `{"role":"user","content":[{"type":"text","text":"Images from the tool results above:"}`...)
	for _, p := range mw.images {
		b = append(b, ',')
		b = appendImage(b, p)
	}
	mw.w.b = append(b, "]}"...)
	mw.images = nil
}

// withImages reports whether m is sent with images (a user message or tool result holding
// some): such messages are encoded for every request, never cached.
func withImages(m *llm.Message) bool {
	return (m.Role == llm.RoleUser || m.Role == llm.RoleTool) && hasImage(m.Content)
}
