package openaicompat

import (
	"sync"

	"github.com/reinhq/rein/internal/llm"
)

// msgCache keeps the encoding of each message of the previous request, by position, so that a
// growing conversation encodes only its new messages: without it, every turn re-encoded the
// whole history. An entry serves only a message equal to the one it was made from, compared
// field by field. The fields are strings, which are immutable: when the history holds the same
// messages as before, the comparison finds the same string data and costs little; a message
// that changed (a fork, a compaction, a context hook, healing) is encoded again, and so is
// every message after it. Messages with images are never cached (their entry only holds the
// position). A nil cache caches nothing. Callers hold mu.
//
// The encodings are kept in one buffer, hist, in message order, each with the comma that
// precedes it in a body, and bodies are sent from hist rather than copied out of it ([bodyWriter]):
// so the bytes below len(hist) are never written again, since a request may still be sending
// them. New encodings are appended; when the history changed, the prefix that still serves is
// copied into a new buffer.
type msgCache struct {
	mu      sync.Mutex
	hist    []byte
	entries []msgEntry
	keys    []partKey // every entry's parts, in order
}

type msgEntry struct {
	role, toolCallID string
	image            bool // a message with images: encoded for every request, not here
	k0, nkeys        int  // its parts are keys[k0 : k0+nkeys]
	from, to         int  // its encoding is hist[from:to] (empty: nothing of it can be sent)
}

// partKey is what of a part the encoding depends on (and a little more: thinking text).
type partKey struct {
	typ                llm.PartType
	text               string
	hasCall            bool
	callID, name, args string
}

func keyOf(p *llm.Part) partKey {
	k := partKey{typ: p.Type, text: p.Text}
	if p.Call != nil {
		k.hasCall, k.callID, k.name, k.args = true, p.Call.ID, p.Call.Name, p.Call.Arguments
	}
	return k
}

func (k *partKey) matches(p *llm.Part) bool {
	if k.typ != p.Type || k.text != p.Text {
		return false
	}
	if p.Call == nil {
		return !k.hasCall
	}
	return k.hasCall && k.callID == p.Call.ID && k.name == p.Call.Name && k.args == p.Call.Arguments
}

// encoding returns where in hist message i (m, without images) is encoded, encoding it when
// the entry at i is not m's.
func (c *msgCache) encoding(i int, m *llm.Message) (from, to int) {
	if i < len(c.entries) && c.holds(&c.entries[i], m) {
		return c.entries[i].from, c.entries[i].to
	}
	from = c.reserve(i)
	c.hist = append(c.hist, ',')
	if c.hist = appendText(c.hist, m); len(c.hist) == from+1 { // nothing of it can be sent
		c.hist = c.hist[:from]
	}
	k0 := len(c.keys)
	for j := range m.Content {
		c.keys = append(c.keys, keyOf(&m.Content[j]))
	}
	c.entries = append(c.entries, msgEntry{role: string(m.Role), toolCallID: m.ToolCallID,
		k0: k0, nkeys: len(m.Content), from: from, to: len(c.hist)})
	return from, len(c.hist)
}

func (c *msgCache) holds(e *msgEntry, m *llm.Message) bool {
	if e.image || e.role != string(m.Role) || e.toolCallID != m.ToolCallID || e.nkeys != len(m.Content) {
		return false
	}
	keys := c.keys[e.k0 : e.k0+e.nkeys]
	for j := range m.Content {
		if !keys[j].matches(&m.Content[j]) {
			return false
		}
	}
	return true
}

// placeholder records that message i has images (nil cache: nothing).
func (c *msgCache) placeholder(i int) {
	if c == nil || i < len(c.entries) && c.entries[i].image {
		return
	}
	at := c.reserve(i)
	c.entries = append(c.entries, msgEntry{image: true, k0: len(c.keys), from: at, to: at})
}

// reserve drops the entries from i on and returns where message i's encoding starts, with
// hist ending there: bytes after it (of dropped entries) may be in a body being sent, so the
// prefix moves to a new buffer rather than being overwritten.
func (c *msgCache) reserve(i int) int {
	c.truncate(i)
	at := 0
	if i > 0 {
		at = c.entries[i-1].to
	}
	if len(c.hist) > at {
		h := make([]byte, at, max(2*at, 4096))
		copy(h, c.hist)
		c.hist = h
	}
	return at
}

// truncate drops the entries from n on (nil cache: nothing).
func (c *msgCache) truncate(n int) {
	if c == nil || len(c.entries) <= n {
		return
	}
	k := c.entries[n].k0
	clear(c.keys[k:])
	c.keys = c.keys[:k]
	clear(c.entries[n:])
	c.entries = c.entries[:n]
}
