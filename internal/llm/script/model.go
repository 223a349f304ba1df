package script

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/llm"
)

// Model is an [llm.Model] that answers from a parsed scenario. It is safe for concurrent use.
type Model struct {
	name    string
	pricing llm.Pricing
	sc      *scenario // immutable; shared by copies made with WithName and WithPricing

	mu       sync.Mutex
	attempts map[string]int // failed-turn attempts by request fingerprint
}

var _ llm.Model = (*Model)(nil)

// Name returns the model name the answers carry ([llm.Message.Model]).
func (m *Model) Name() string { return m.name }

// Pricing returns the prices the scripted usage is charged at.
func (m *Model) Pricing() llm.Pricing { return m.pricing }

// WithName returns a new instance of the scenario whose answers carry name as their model name.
// The new instance starts with no attempts counted.
func (m *Model) WithName(name string) *Model {
	return &Model{name: name, pricing: m.pricing, sc: m.sc}
}

// WithPricing returns a new instance of the scenario that prices usage at p. The new instance
// starts with no attempts counted.
func (m *Model) WithPricing(p llm.Pricing) *Model {
	return &Model{name: m.name, pricing: p, sc: m.sc}
}

// position is what a request asks for: the step after the last user message.
type position struct {
	user      string // text of the last user message; "" when there is none
	userIndex int    // index of that message among the healed messages; -1 when none
	step      int    // assistant messages since the last user message
	print     string // hex sha256 of the healed conversation
}

// locate reads the position from the request alone.
func locate(req *llm.Request) position {
	msgs := llm.Heal(req.Messages)
	pos := position{userIndex: -1}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			pos.userIndex = i
			pos.user = msgs[i].Text()
			break
		}
	}
	for _, m := range msgs[pos.userIndex+1:] {
		if m.Role == llm.RoleAssistant {
			pos.step++
		}
	}
	pos.print = fingerprint(msgs)
	return pos
}

// fingerprint hashes what a provider would see of the conversation: roles, content and tool
// result links. Timestamps and provenance are left out, so a replayed session that rebuilds
// the same conversation gets the same fingerprint.
func fingerprint(msgs []llm.Message) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, m := range msgs {
		field("message")
		field(string(m.Role))
		field(m.ToolCallID)
		field(m.ToolName)
		field(fmt.Sprint(m.IsError))
		for _, p := range m.Content {
			field(string(p.Type))
			field(p.Text)
			field(p.Signature)
			field(fmt.Sprint(p.Redacted))
			field(p.MIMEType)
			field(string(p.Data))
			if p.Call != nil {
				field(p.Call.ID)
				field(p.Call.Name)
				field(p.Call.Arguments)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// choose returns the turn that answers pos, or the reason there is none.
func (sc *scenario) choose(pos position) (*dialog, *turn, string) {
	for _, d := range sc.dialogs {
		if d.match != nil && !d.match.MatchString(pos.user) {
			continue
		}
		if pos.step < len(d.turns) {
			return d, d.turns[pos.step], ""
		}
		return d, nil, fmt.Sprintf("script %s: no scripted answer for step %d (%s since %s): %s scripts %d turn(s); the first dialog whose match fits decides, later dialogs are not tried",
			cmpOr(sc.source, "scenario"), pos.step, plural(pos.step, "assistant message"), userDesc(pos), d.describe(), len(d.turns))
	}
	return nil, nil, fmt.Sprintf("script %s: no scripted answer for step %d: no dialog matches %s",
		cmpOr(sc.source, "scenario"), pos.step, userDesc(pos))
}

func (d *dialog) describe() string {
	s := fmt.Sprintf("%s (line %d", d.field, d.line)
	if d.match != nil {
		s += fmt.Sprintf(", match %q", d.match.String())
	}
	return s + ")"
}

func userDesc(pos position) string {
	if pos.userIndex < 0 {
		return "the start (the request has no user message)"
	}
	return fmt.Sprintf("the user message %q", clip(pos.user, 120))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// failNow counts an attempt of a failing turn and reports whether this attempt fails.
func (m *Model) failNow(pos position, t *turn) bool {
	if t.times == 0 {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.attempts == nil {
		m.attempts = map[string]int{}
	}
	m.attempts[pos.print]++
	return m.attempts[pos.print] <= t.times
}

// Stream answers req with the scripted turn for its position. See the package documentation.
func (m *Model) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
	if req == nil {
		req = &llm.Request{}
	}
	if emit == nil {
		emit = func(llm.Event) {}
	}
	pos := locate(req)
	s := &streamer{ctx: ctx, emit: emit, msg: &llm.Message{
		Role: llm.RoleAssistant, Provider: llm.ProviderScript, API: llm.APIScript, Model: m.name,
		ResponseID: "script_" + pos.print[:16],
	}}
	s.emit(llm.Event{Type: llm.EventStart})
	if err := ctx.Err(); err != nil {
		return s.fail(llm.TransportError(ctx, err))
	}
	if m.sc == nil {
		return s.fail(&llm.Error{Kind: llm.KindInvalid, Message: "script: the model has no scenario (build it with Load or Parse)"})
	}
	d, t, why := m.sc.choose(pos)
	if t == nil {
		return s.fail(&llm.Error{Kind: llm.KindInvalid, Message: why})
	}
	s.delay = t.delay
	if t.fail != nil && m.failNow(pos, t) {
		return s.failure(t.fail)
	}
	return s.answer(t, pos, d.captures(pos.user), m.pricing)
}

// captures returns the named groups of d's match in the user text: a call's args carry
// ${name} as the captured text (see expandArgs). Nil without named groups.
func (d *dialog) captures(user string) map[string]string {
	if d.match == nil || d.match.NumSubexp() == 0 {
		return nil
	}
	sub := d.match.FindStringSubmatch(user)
	if sub == nil {
		return nil
	}
	out := map[string]string{}
	for i, name := range d.match.SubexpNames() {
		if name != "" && i < len(sub) {
			out[name] = sub[i]
		}
	}
	return out
}

// expandArgs replaces ${name} in the JSON text args by the captured text of the named group
// name, escaped as JSON string content; a ${name} without such a group stays as it is.
func expandArgs(args string, caps map[string]string) string {
	if len(caps) == 0 || !strings.Contains(args, "${") {
		return args
	}
	for name, v := range caps {
		q, _ := json.Marshal(v) // a string always marshals
		args = strings.ReplaceAll(args, "${"+name+"}", string(q[1:len(q)-1]))
	}
	return args
}
