package kernel

import (
	"strconv"

	"github.com/reinhq/rein/internal/llm"
)

// MaxCallIDBytes is the longest tool-call id the kernel keeps as the provider sent it.
const MaxCallIDBytes = 64

// assignedIDBytes bounds an id rein assigns, under every provider's limit (OpenAI's is 40).
const assignedIDBytes = 40

// CallIDs is an optional capability of a [Recorder]: whether a tool-call id is already
// recorded anywhere in the session, beyond the context a run was given (a call compacted
// away, another lane). The kernel looks through Unwrap() Recorder, as for [Positioner].
type CallIDs interface {
	CallIDUsed(id string) bool
}

// callIDs is the run's view of the tool-call ids its session has used.
type callIDs struct {
	seen     map[string]bool // ids of the context and of this run's messages
	recorded CallIDs         // the recorder's view, nil when it has none
}

func newCallIDs(rec Recorder, history []llm.Message) *callIDs {
	c := &callIDs{seen: map[string]bool{}, recorded: recordedCallIDs(rec)}
	for i := range history {
		c.add(&history[i])
	}
	return c
}

// add marks the calls of an answered (not failed) assistant message as used.
func (c *callIDs) add(m *llm.Message) {
	if m.Role != llm.RoleAssistant || m.Failed() {
		return
	}
	for _, call := range m.ToolCalls() {
		c.seen[call.ID] = true
	}
}

func (c *callIDs) used(id string) bool {
	return c.seen[id] || c.recorded != nil && c.recorded.CallIDUsed(id)
}

// assign gives every tool call of msg an id that is valid ([validCallID]), unique in msg and
// unused in the session, before msg is recorded. A call whose provider id fails any of these
// gets rein_<n>_<the provider id's safe characters> for the least n ≥ 1 that is free, and keeps
// the provider's id in ProviderID; a replaced call is a copy, msg's parts are repointed to it.
// The ids of an answered msg are then marked used.
func (c *callIDs) assign(msg *llm.Message) {
	inMsg := map[string]bool{}
	for i := range msg.Content {
		p := &msg.Content[i]
		if p.Type != llm.PartToolCall || p.Call == nil {
			continue
		}
		if id := p.Call.ID; !validCallID(id) || inMsg[id] || c.used(id) {
			call := *p.Call
			call.ID, call.ProviderID = c.fresh(id, inMsg), id
			p.Call = &call
		}
		inMsg[p.Call.ID] = true
	}
	c.add(msg)
}

// fresh returns the first rein_<n>_<safe part of orig> neither used nor taken in msg.
func (c *callIDs) fresh(orig string, inMsg map[string]bool) string {
	safe := make([]byte, 0, len(orig))
	for i := 0; i < len(orig); i++ {
		if b := orig[i]; isIDByte(b) && b != '.' && b != ':' {
			safe = append(safe, b)
		}
	}
	for n := 1; ; n++ {
		id := "rein_" + strconv.Itoa(n)
		if len(safe) > 0 {
			id += "_" + string(safe[:min(len(safe), assignedIDBytes-len(id)-1)])
		}
		if !inMsg[id] && !c.used(id) {
			return id
		}
	}
}

// validCallID reports whether a provider's id can be kept: 1 to [MaxCallIDBytes] bytes of
// ASCII letters, digits and _ - . : (what the providers rein speaks send and accept back).
func validCallID(id string) bool {
	if id == "" || len(id) > MaxCallIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !isIDByte(id[i]) {
			return false
		}
	}
	return true
}

func isIDByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-' || b == '.' || b == ':'
}

// recordedCallIDs returns the recorder's CallIDs, looking through wrappers; nil when none has it.
func recordedCallIDs(rec Recorder) CallIDs {
	c, _ := capability[CallIDs](rec)
	return c
}
