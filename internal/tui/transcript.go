package tui

import (
	"fmt"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/wire"
)

// transcript is the conversation as the screen shows it, built from the wire event stream
// (and, for a resumed session, from its recorded messages the same way).
type transcript struct {
	blocks []block
	// parts are the blocks of the assistant message streaming now, by content index; a
	// retried attempt removes them.
	parts     map[int]block
	partsFrom int
	tools     map[string]*toolBlock
	width     int
}

func newTranscript(width int) *transcript {
	return &transcript{width: width, tools: map[string]*toolBlock{}}
}

func (t *transcript) add(b block) { t.blocks = append(t.blocks, b) }

// apply adds what one event shows.
func (t *transcript) apply(ev wire.Event) {
	switch ev.Type {
	case "message_start":
		if ev.Message != nil && ev.Message.Role == string(llm.RoleUser) {
			t.add(newUser(userText(ev.Message)))
		}
		if ev.Message != nil && ev.Message.Role == string(llm.RoleAssistant) {
			t.parts, t.partsFrom = map[int]block{}, len(t.blocks)
		}
	case "message_update":
		t.delta(ev.Delta)
	case "retry":
		t.dropAttempt()
		if r := ev.Retry; r != nil {
			t.add(newNotice(retryText(r), "warn"))
		}
		t.partsFrom = len(t.blocks)
	case "message_end":
		if ev.Message != nil && ev.Message.Role == string(llm.RoleAssistant) {
			t.endAssistant(ev.Message)
		}
	case "tool_start":
		if ev.Call != nil {
			tb := newTool(ev.Call, t.width)
			t.tools[ev.Call.ID] = tb
			t.add(tb)
		}
	case "tool_update":
		if tb := t.tools[callID(ev.Call)]; tb != nil && ev.Delta != nil {
			tb.output(ev.Delta)
		}
	case "tool_end":
		t.toolEnd(ev.Call, ev.Message)
	case "compaction":
		before := 0
		if ev.Compaction != nil {
			before = ev.Compaction.TokensBefore
		}
		t.add(newNotice(fmt.Sprintf("compacted: a summary replaces the older conversation (%d tokens before)", before), "info"))
	case "agent_end":
		if o := ev.Outcome; o != nil && o.Status != "completed" {
			kind := "error"
			if o.Status == "aborted" {
				kind = "warn"
			}
			text := "run " + o.Status
			if o.Error != "" {
				text += ": " + o.Error
			}
			t.add(newNotice(text, kind))
		}
	}
}

func callID(c *wire.Call) string {
	if c == nil {
		return ""
	}
	return c.ID
}

func (t *transcript) delta(d *wire.Delta) {
	if d == nil || t.parts == nil {
		return
	}
	switch d.Kind {
	case "text_start":
		b := newText(t.width)
		t.parts[d.Index] = b
		t.add(b)
	case "thinking_start":
		b := newThinking(t.width)
		t.parts[d.Index] = b
		t.add(b)
	case "text_delta":
		if b, ok := t.parts[d.Index].(*textBlock); ok {
			b.s.add(clean(d.Text))
		}
	case "thinking_delta":
		if b, ok := t.parts[d.Index].(*thinkingBlock); ok {
			b.s.add(clean(d.Text))
		}
	case "thinking_end":
		if b, ok := t.parts[d.Index].(*thinkingBlock); ok {
			b.done = true
		}
	}
}

// dropAttempt removes what a failed attempt showed.
func (t *transcript) dropAttempt() {
	if t.parts == nil {
		return
	}
	if t.partsFrom <= len(t.blocks) {
		t.blocks = t.blocks[:t.partsFrom]
	}
	t.parts = map[int]block{}
}

// endAssistant settles the streamed message: its text becomes markdown; a message that was
// never streamed (a resumed session) is added whole; a failed one shows its error.
func (t *transcript) endAssistant(m *wire.Message) {
	streamed := len(t.parts) > 0
	if !streamed {
		for _, p := range m.Content {
			switch p.Type {
			case "thinking":
				b := newThinking(t.width)
				b.s.add(clean(p.Text))
				b.done = true
				t.add(b)
			case "text":
				if p.Text == "" {
					continue
				}
				b := newText(t.width)
				b.s.add(clean(p.Text))
				b.final = true
				t.add(b)
			}
		}
	}
	for _, b := range t.parts {
		switch b := b.(type) {
		case *textBlock:
			b.final = true
		case *thinkingBlock:
			b.done = true
		}
	}
	t.parts = nil
	if m.Error != nil {
		text := "model error"
		if m.Error.Status != 0 {
			text += fmt.Sprintf(" (%d)", m.Error.Status)
		}
		t.add(newNotice(fmt.Sprintf("%s, %s: %s", text, m.Error.Kind, m.Error.Message), "error"))
	}
}

// toolEnd settles a call's block; a call that never started (refused before it ran) gets
// one now.
func (t *transcript) toolEnd(c *wire.Call, m *wire.Message) {
	if c == nil {
		return
	}
	tb := t.tools[c.ID]
	if tb == nil {
		tb = newTool(c, t.width)
		t.add(tb)
	}
	tb.end(m)
	delete(t.tools, c.ID)
}

// history adds a recorded conversation (a resumed session) as the stream would have shown it.
func (t *transcript) history(msgs []llm.Message) {
	calls := map[string]*wire.Call{}
	for i := range msgs {
		m := wire.NewMessage(&msgs[i])
		switch msgs[i].Role {
		case llm.RoleUser:
			t.add(newUser(userText(m)))
		case llm.RoleAssistant:
			t.endAssistant(m)
			for _, p := range m.Content {
				if p.Call != nil {
					calls[p.Call.ID] = p.Call
				}
			}
		case llm.RoleTool:
			c := calls[m.ToolCallID]
			if c == nil {
				c = &wire.Call{ID: m.ToolCallID, Name: m.ToolName}
			}
			t.toolEnd(c, m)
		}
	}
}

func retryText(r *wire.Retry) string {
	reason := "the request failed"
	if e := r.Error; e != nil {
		reason = e.Kind
		if e.Status != 0 {
			reason += fmt.Sprintf(" %d", e.Status)
		}
		if e.Message != "" {
			reason += ": " + e.Message
		}
	}
	wait := (time.Duration(r.DelayMs) * time.Millisecond).Round(100 * time.Millisecond)
	return fmt.Sprintf("attempt %d failed (%s); retrying in %s", r.Attempt, reason, wait)
}

// resize lays every block out again at width (once per resize, not per frame).
func (t *transcript) resize(width int) { t.width = width }

// rows returns the rows a frame of height shows, scroll rows above the bottom, and whether
// they reach the top of the conversation; it lays out and reads only the blocks it needs.
func (t *transcript) rows(v *viewSettings, height, scroll int) ([]string, bool) {
	out := make([]string, 0, height)
	skip := scroll
	for b := len(t.blocks) - 1; b >= 0 && len(out) < height; b-- {
		blk := t.blocks[b]
		blk.layout(v)
		for i := blk.len() - 1; i >= -1 && len(out) < height; i-- {
			r := ""
			if i >= 0 {
				r = blk.row(i)
			} else if b == 0 {
				break
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, r)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, len(out) < height
}
