package openaicompat

import (
	"fmt"
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
//
// A request of the same [llm.Lineage] as the one the entries were last made or checked for
// vouches that the messages that request had are unchanged: their entries serve without
// comparing, and Heal's check goes on from its mark at their end, so such a request reads only
// its new messages (see [msgCache.vouched]).
type msgCache struct {
	mu      sync.Mutex
	hist    []byte
	entries []msgEntry
	keys    []partKey // every entry's parts, in order
	// lastImage is 1 + the index of the last entry that may be an image placeholder (0: none).
	lastImage int

	// lineage is the lineage of the last request, nil when it had none or needed healing; its
	// messages were mark.Len() = len(entries), all healthy, mark Heal's mark at their end.
	lineage *llm.Lineage
	mark    llm.HealMark

	// read counts the messages Heal's check and the comparison with the entries read (or
	// encoded), over every request: the work that grows with the history (tests and
	// benchmarks report it).
	read int
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
	c.lastImage = len(c.entries)
}

// vouched heals history and returns the result, how many of its first messages have entries
// that serve without comparing, and Heal's mark at its end (the zero mark when it needed
// healing). The entries that serve so are those of the cache's last request when req is of
// the same lineage (which vouches that those messages are unchanged) and history needs no
// healing; Heal's check then reads only the messages after them. A nil cache vouches for
// nothing.
func (c *msgCache) vouched(req *llm.Request, history []llm.Message) ([]llm.Message, int, llm.HealMark) {
	var mark llm.HealMark
	if c != nil && req.Lineage != nil && req.Lineage == c.lineage && c.mark.Len() <= min(len(history), len(c.entries)) {
		mark = c.mark
	}
	healed, next := llm.HealGrown(history, mark)
	vouched := mark.Len()
	if next.Len() != len(history) {
		vouched = 0 // healed: positions may have moved
	}
	if c == nil {
		return healed, 0, next
	}
	c.read += len(history) - mark.Len() + len(healed) - vouched
	if verifyVouched && vouched > 0 {
		c.verify(history, mark)
	}
	return healed, vouched, next
}

// remember records the lineage of the request the entries were just made for and Heal's
// mark at the end of its messages (next; the zero mark when they needed healing: the next
// request of the lineage is then compared).
func (c *msgCache) remember(lineage *llm.Lineage, next llm.HealMark) {
	if c == nil {
		return
	}
	c.lineage, c.mark = nil, llm.HealMark{}
	if lineage != nil && next.Len() == len(c.entries) && next.Len() > 0 {
		c.lineage, c.mark = lineage, next
	}
}

// verifyVouched makes every vouched request also compare its vouched messages with the
// entries and check them as Heal does from the start, and panic when the vouch was false
// (set by the package's tests).
var verifyVouched bool

func (c *msgCache) verify(history []llm.Message, mark llm.HealMark) {
	if _, full := llm.HealGrown(history[:mark.Len()], llm.HealMark{}); full != mark {
		panic(fmt.Sprintf("openaicompat: a lineage vouched for %d messages, but Heal's check of them ends at %+v, not %+v", mark.Len(), full, mark))
	}
	for i := range mark.Len() {
		if e := &c.entries[i]; e.image != withImages(&history[i]) || !e.image && !c.holds(e, &history[i]) {
			panic(fmt.Sprintf("openaicompat: a lineage vouched for %d messages, but message %d changed", mark.Len(), i))
		}
	}
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
	c.lastImage = min(c.lastImage, n) // an image may remain before n
	clear(c.keys[k:])
	c.keys = c.keys[:k]
	clear(c.entries[n:])
	c.entries = c.entries[:n]
}
