package openaicompat

import (
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

// appendMessages appends the healed history as chat messages: the system prompt as role
// "system", user text and images, assistant text and tool calls (thinking is not sent back: the
// chat wire has no field for it), and tool results as role "tool". Images in tool results,
// which role "tool" cannot carry, follow the run of tool results as one user message. With a
// cache, messages the cache holds are neither encoded nor copied again, and those the request's
// lineage vouches for are not even read ([msgCache.vouched]).
func appendMessages(w *bodyWriter, req *llm.Request, cache *msgCache) {
	system, history := req.System, req.Messages
	w.b = append(w.b, '[')
	first := true
	sep := func() {
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
	}
	if system != "" {
		sep()
		w.b = append(w.b, `{"role":"system","content":`...)
		w.b = appendString(w.b, system)
		w.b = append(w.b, '}')
	}
	var images []llm.Part
	flush := func() {
		if len(images) == 0 {
			return
		}
		sep()
		w.b = append(w.b, `{"role":"user","content":[{"type":"text","text":"Images from the tool results above:"}`...)
		for _, p := range images {
			w.b = append(w.b, ',')
			w.b = appendImage(w.b, p)
		}
		w.b = append(w.b, "]}"...)
		images = nil
	}
	if cache != nil {
		cache.mu.Lock()
		defer cache.mu.Unlock()
	}
	healed, vouched, mark := cache.vouched(req, history)
	cached := func(from, to int) {
		if from == to {
			return
		}
		if first { // every cached encoding starts with its comma
			from++
		}
		first = false
		w.cached(from, to)
	}
	for i := 0; i < len(healed); i++ {
		if i < vouched && !cache.entries[i].image {
			e := &cache.entries[i]
			if i >= cache.lastImage && len(images) == 0 {
				// No image from here to the last vouched message: one run of the cache's bytes.
				cached(e.from, cache.entries[vouched-1].to)
				i = vouched - 1
				continue
			}
			if llm.Role(e.role) != llm.RoleTool {
				flush()
			}
			cached(e.from, e.to)
			continue
		}
		m := &healed[i]
		if m.Role != llm.RoleTool {
			flush()
		}
		if withImages(m) {
			cache.placeholder(i)
			sep()
			if m.Role == llm.RoleUser {
				w.b = appendUser(w.b, m.Content)
				continue
			}
			text, imgs := splitImages(m.Content) // a tool result (appendText otherwise)
			if text == "" {
				text = "(image attached below)"
			}
			w.b = appendTool(w.b, text, m.ToolCallID)
			images = append(images, imgs...)
			continue
		}
		if cache == nil {
			mark, wasFirst := len(w.b), first
			sep()
			start := len(w.b)
			if w.b = appendText(w.b, m); len(w.b) == start { // nothing of it can be sent
				w.b, first = w.b[:mark], wasFirst
			}
			continue
		}
		cached(cache.encoding(i, m))
	}
	flush()
	if cache != nil {
		cache.truncate(len(healed))
		cache.remember(req.Lineage, mark)
		w.hist = cache.hist
	}
	w.b = append(w.b, ']')
}

// withImages reports whether m is sent with images (a user message or tool result holding
// some): such messages are encoded for every request, never cached.
func withImages(m *llm.Message) bool {
	return (m.Role == llm.RoleUser || m.Role == llm.RoleTool) && hasImage(m.Content)
}
