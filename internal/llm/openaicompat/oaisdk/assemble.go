package oaisdk

import (
	"fmt"

	"github.com/reinhq/rein/internal/llm"
)

// Assembler builds an assistant message from decoded stream content and emits the matching
// events, in order, through the emit function it was given.
//
// Content parts are blocks. At most one block is open at a time: starting a block ends the open
// one (with its *_end event). Tool-call arguments can still be appended to an ended call (for
// servers that interleave calls); the delta event names the call's part index.
//
// An Assembler is used by one goroutine. After [Assembler.Done] or [Assembler.Fail] it neither
// changes the message nor emits anything more.
type Assembler struct {
	msg      *llm.Message
	emit     func(llm.Event)
	open     int // index of the open part, or -1
	finished bool
}

// NewAssembler returns an assembler filling msg and emits [llm.EventStart].
func NewAssembler(msg *llm.Message, emit func(llm.Event)) *Assembler {
	a := &Assembler{msg: msg, emit: emit, open: -1}
	a.send(llm.Event{Type: llm.EventStart})
	return a
}

func (a *Assembler) send(ev llm.Event) {
	if !a.finished {
		a.emit(ev)
	}
}

// Message returns the message being built.
func (a *Assembler) Message() *llm.Message { return a.msg }

// Open returns the index of the open block and its type, or -1 and "".
func (a *Assembler) Open() (int, llm.PartType) {
	if a.open < 0 {
		return -1, ""
	}
	return a.open, a.msg.Content[a.open].Type
}

// Start ends the open block, appends p (a text, thinking or tool-call part, usually empty) and
// opens it. It returns the part's index (-1 once the message is finished).
func (a *Assembler) Start(p llm.Part) int {
	if a.finished {
		return -1
	}
	a.Close()
	i := len(a.msg.Content)
	a.msg.Content = append(a.msg.Content, p)
	a.open = i
	ev := llm.Event{Index: i}
	switch p.Type {
	case llm.PartText:
		ev.Type = llm.EventTextStart
	case llm.PartThinking:
		ev.Type = llm.EventThinkingStart
	case llm.PartToolCall:
		ev.Type = llm.EventToolCallStart
		ev.Call = &llm.ToolCall{ID: p.Call.ID, Name: p.Call.Name}
	default:
		return i
	}
	a.send(ev)
	return i
}

// StartCall opens a tool-call block with empty arguments and returns its index.
func (a *Assembler) StartCall(id, name string) int {
	return a.Start(llm.Part{Type: llm.PartToolCall, Call: &llm.ToolCall{ID: id, Name: name}})
}

// Append adds delta to part i: text or thinking text, or tool-call arguments.
func (a *Assembler) Append(i int, delta string) {
	if delta == "" || a.finished || i < 0 || i >= len(a.msg.Content) {
		return
	}
	p := &a.msg.Content[i]
	ev := llm.Event{Index: i, Delta: delta}
	switch p.Type {
	case llm.PartText:
		p.Text += delta
		ev.Type = llm.EventTextDelta
	case llm.PartThinking:
		p.Text += delta
		ev.Type = llm.EventThinkingDelta
	case llm.PartToolCall:
		p.Call.Arguments += delta
		ev.Type = llm.EventToolCallDelta
	default:
		return
	}
	a.send(ev)
}

// Text appends delta to the open text block, opening a new one if the open block is not text.
// It returns the block's index, or -1 for an empty delta.
func (a *Assembler) Text(delta string) int { return a.appendTo(llm.PartText, delta) }

// Thinking is [Assembler.Text] for thinking blocks.
func (a *Assembler) Thinking(delta string) int { return a.appendTo(llm.PartThinking, delta) }

func (a *Assembler) appendTo(t llm.PartType, delta string) int {
	if delta == "" {
		return -1
	}
	i, open := a.Open()
	if open != t {
		i = a.Start(llm.Part{Type: t})
	}
	a.Append(i, delta)
	return i
}

// SetSignature records the provider's opaque token for part i.
func (a *Assembler) SetSignature(i int, sig string) {
	if !a.finished && i >= 0 && i < len(a.msg.Content) {
		a.msg.Content[i].Signature = sig
	}
}

// End ends block i if it is the open one.
func (a *Assembler) End(i int) {
	if i < 0 || i != a.open {
		return
	}
	a.open = -1
	p := &a.msg.Content[i]
	ev := llm.Event{Index: i}
	switch p.Type {
	case llm.PartText:
		ev.Type = llm.EventTextEnd
	case llm.PartThinking:
		ev.Type = llm.EventThinkingEnd
	case llm.PartToolCall:
		ev.Type = llm.EventToolCallEnd
		ev.Call = p.Call
	default:
		return
	}
	a.send(ev)
}

// Close ends the open block, if any.
func (a *Assembler) Close() { a.End(a.open) }

// HasCalls reports whether the message has a tool call.
func (a *Assembler) HasCalls() bool { return len(a.msg.ToolCalls()) > 0 }

// Done ends the open block, sets the stop reason (and zero usage when none was reported) and
// emits [llm.EventDone]. It returns the message.
func (a *Assembler) Done(stop llm.StopReason) *llm.Message {
	if a.finished {
		return a.msg
	}
	a.Close()
	a.msg.Role = llm.RoleAssistant
	a.msg.StopReason = stop
	if a.msg.Usage == nil {
		a.msg.Usage = &llm.Usage{}
	}
	a.send(llm.Event{Type: llm.EventDone, Message: a.msg})
	a.finished = true
	return a.msg
}

// Fail ends the open block, turns the message into a failure ([llm.Fail]) and emits
// [llm.EventError]. It returns the message.
func (a *Assembler) Fail(err *llm.Error) *llm.Message {
	if a.finished {
		return a.msg
	}
	a.Close()
	llm.Fail(a.msg, err)
	a.send(llm.Event{Type: llm.EventError, Message: a.msg})
	a.finished = true
	return a.msg
}

// Guard turns a panic while streaming into a failed message instead of crashing the caller.
// Use it as the first deferred call after creating the assembler:
//
//	defer oaisdk.Guard(a, &out, apiKey)
func Guard(a *Assembler, out **llm.Message, apiKey string) {
	if r := recover(); r != nil {
		*out = a.Fail(Redact(&llm.Error{Kind: llm.KindProtocol,
			Message: fmt.Sprintf("internal error while reading the stream: %v", r)}, apiKey))
	}
}
