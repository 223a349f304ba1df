package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Entry is one message of the tree.
type Entry struct {
	ID         string
	Parent     string
	Lane       string
	Intent     string
	Seq        int64
	Time       time.Time
	Message    llm.Message
	Compaction *kernel.CompactionInfo
	// Forked marks an entry copied from the parent session; its usage counts there.
	Forked bool
}

// Intent is a recorded intent and how far it got.
type Intent struct {
	ID  string
	Seq int64
	intentFields
	// Materialized are the reserved ids recorded so far, in record order.
	Materialized []string
	Closed       string // the close action, if closed without its entry
	Cancelled    bool
	// LastAttempt is the number of a model call's latest attempt: its Attempt, or the
	// attempt record written for its last retry.
	LastAttempt int
}

// Open reports whether the intent still waits for its settlement.
func (in *Intent) Open() bool {
	if in.Closed != "" {
		return false
	}
	for _, id := range in.Reserved {
		if !slices.Contains(in.Materialized, id) {
			return true
		}
	}
	return false
}

// Lane is a lane's position.
type Lane struct {
	Name string
	// Leaf is the tip of the lane's conversation ("" before the first message).
	Leaf string
	// RunOpen says a run started and has not ended.
	RunOpen bool
	// Attempts counts the attempts of the lane's current logical model call: every model-call
	// intent and attempt record since the last entry that changed the context the model
	// answers (a user message — a compaction summary included —, an answer, a tool result). A
	// failed or aborted assistant message does not end the logical call: the next attempt
	// answers the same conversation.
	Attempts int
	// Policy is the attempt limit of the current logical call: the retry policy recorded by its
	// first attempt's intent (0 while Attempts is 0).
	Policy int
}

// countsAttempts reports whether recording e leaves the lane's logical model call going: a
// failed or aborted assistant message (the call failed; the conversation, which providers are
// sent without it, waits for the same answer).
func countsAttempts(e *Entry) bool {
	return e.Message.Role == llm.RoleAssistant && e.Message.Failed()
}

// State is a session reduced from its records. It is rebuilt on open and kept current by every
// write; callers get copies through Session methods.
type State struct {
	Header   ledger.Header
	Entries  map[string]*Entry
	Order    []*Entry // in record order
	Intents  map[string]*Intent
	Lanes    map[string]*Lane
	Facts    map[string]string
	Usage    llm.Usage // summed over this session's model requests (failed attempts and compactions included, forked entries not)
	Created  time.Time
	Updated  time.Time
	reserved map[string]string // entry id -> intent id
	results  map[string][]*Entry
	lastAsst map[string]string // lane -> last assistant entry
	callIDs  map[string]bool   // the tool-call ids of every answered assistant entry
}

func newState(h ledger.Header) *State {
	return &State{Header: h, Entries: map[string]*Entry{}, Intents: map[string]*Intent{}, Lanes: map[string]*Lane{},
		Facts: map[string]string{}, reserved: map[string]string{}, results: map[string][]*Entry{}, lastAsst: map[string]string{},
		callIDs: map[string]bool{}}
}

func (st *State) lane(name string) *Lane {
	if name == "" {
		name = MainLane
	}
	l := st.Lanes[name]
	if l == nil {
		l = &Lane{Name: name}
		st.Lanes[name] = l
	}
	return l
}

// violation is a record the session's rules refuse. Found on open it is corruption (see
// corrupt); offered to a write it is refused with ErrInvalidRecord and never written.
type violation struct{ reason string }

func (v *violation) Error() string { return v.reason }

func violated(format string, args ...any) error {
	return &violation{reason: fmt.Sprintf(format, args...)}
}

// corrupt is err, a violation of record r found on open, as the ledger's corruption error.
func corrupt(r ledger.Record, err error) error {
	return &ledger.CorruptError{Offset: r.Offset, Seq: r.Seq, Reason: "session: " + err.Error()}
}

// apply folds one verified record into the state, checking the session's rules: the one
// implementation of them, run by Open on every record read and by every write on the record
// before it is written (written is then the body it was encoded from, else nil). A refused record may leave st partly changed: the caller drops st (a
// failed open) or rebuilds it from the ledger (a refused write).
func (st *State) apply(r ledger.Record, blob func(string) ([]byte, error), written any) error {
	if st.Created.IsZero() {
		st.Created = r.TS
	}
	st.Updated = r.TS
	switch r.Kind {
	case ledger.KindHeader, ledger.KindRecovery, ledger.KindSalvage:
		return nil
	case KindEntry:
		var b entryBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("entry body: %v", err)
		}
		if b.Message == nil && b.Blob != "" {
			var m llm.Message
			if err := decodeBlob(blob, b.Blob, &m); err != nil {
				return violated("entry blob %s: %v", b.Blob, err)
			}
			b.Message = &m
		} else if b.Blob != "" {
			return violated("entry holds its message both inline and as blob %s", b.Blob)
		}
		if b.Message == nil {
			return violated("entry without a message")
		}
		if err := st.addEntry(&Entry{ID: r.ID, Parent: r.ParentID, Lane: laneName(b.Lane), Intent: b.Intent, Seq: r.Seq, Time: r.TS,
			Message: *b.Message, Compaction: b.Compaction, Forked: b.Forked}); err != nil {
			return err
		}
		if b.Usage != nil && !b.Forked {
			st.Usage.Add(*b.Usage)
		}
		return nil
	case KindIntent:
		var b intentBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("intent body: %v", err)
		}
		b.Lane = laneName(b.Lane)
		if b.Call == nil && b.CallBlob != "" {
			var c llm.ToolCall
			if err := decodeBlob(blob, b.CallBlob, &c); err != nil {
				return violated("intent call blob %s: %v", b.CallBlob, err)
			}
			b.Call = &c
		} else if b.CallBlob != "" {
			return violated("intent holds its call both inline and as blob %s", b.CallBlob)
		}
		if len(b.Reserved) == 0 {
			return violated("intent reserves no ids")
		}
		if b.Kind != kernel.IntentModelCall && b.Kind != kernel.IntentToolCall && b.Kind != kernel.IntentCompaction {
			return violated("unknown intent kind %q", b.Kind)
		}
		if b.Kind == kernel.IntentToolCall && b.Call == nil {
			return violated("tool intent without its call")
		}
		for _, id := range b.Reserved {
			if _, ok := st.reserved[id]; ok || st.Entries[id] != nil {
				return violated("intent reserves id %s, which is already taken", id)
			}
		}
		for _, id := range b.Reserved {
			st.reserved[id] = r.ID
		}
		st.Intents[r.ID] = &Intent{ID: r.ID, Seq: r.Seq, intentFields: intentFields(b), LastAttempt: b.Attempt}
		if b.Kind == kernel.IntentModelCall {
			l := st.lane(b.Lane)
			if l.Attempts == 0 {
				l.Policy = 1
				if b.Retry != nil {
					l.Policy = max(1, b.Retry.MaxAttempts)
				}
			}
			l.Attempts++
		}
		return nil
	case KindAttempt:
		var b attemptBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("attempt body: %v", err)
		}
		in := st.Intents[b.Intent]
		if in == nil || in.Kind != kernel.IntentModelCall || !in.Open() {
			return violated("attempt %d of intent %s, which is not an open model call", b.Attempt, b.Intent)
		}
		l := st.lane(in.Lane)
		if b.Attempt != l.Attempts+1 {
			return violated("attempt %d of intent %s follows %d attempts of its call", b.Attempt, b.Intent, l.Attempts)
		}
		l.Attempts++
		in.LastAttempt = b.Attempt
		return nil
	case KindClosed:
		var b closedBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("closed body: %v", err)
		}
		in := st.Intents[b.Intent]
		if in == nil || !in.Open() {
			return violated("closes intent %s, which is not open", b.Intent)
		}
		in.Closed = b.Action
		if b.Usage != nil {
			st.Usage.Add(*b.Usage)
		}
		return nil
	case KindCancel:
		var b cancelBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("cancel body: %v", err)
		}
		for _, id := range b.Intents {
			in := st.Intents[id]
			if in == nil {
				return violated("cancels unknown intent %s", id)
			}
			in.Cancelled = true
		}
		return nil
	case KindRun:
		var b runBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("run body: %v", err)
		}
		l := st.lane(b.Lane)
		switch b.Event {
		case RunStart:
			if l.RunOpen {
				return violated("a second run opened in lane %q while one is open", l.Name)
			}
			l.RunOpen = true
		case RunEnd:
			if !l.RunOpen {
				return violated("run end in lane %q without an open run", l.Name)
			}
			l.RunOpen = false
		default:
			return violated("unknown run event %q", b.Event)
		}
		return nil
	case KindFact:
		var b factBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("fact body: %v", err)
		}
		if b.Blob != "" {
			if b.Value != "" {
				return violated("fact %q holds its value both inline and as blob %s", b.Key, b.Blob)
			}
			data, err := blob(b.Blob)
			if err != nil {
				return violated("fact %q blob %s: %v", b.Key, b.Blob, err)
			}
			b.Value = string(data)
		}
		st.Facts[b.Key] = b.Value
		return nil
	case KindLane:
		var b laneBody
		if err := decodeRecord(r.Body, written, &b); err != nil {
			return violated("lane body: %v", err)
		}
		if e := st.Entries[b.Leaf]; b.Leaf != "" && (e == nil || e.Message.Role == llm.RoleTool) {
			return violated("lane %q moved to %q, which is not a user or assistant entry", b.Name, b.Leaf)
		}
		st.lane(b.Name).Leaf = b.Leaf
		return nil
	}
	if ledger.Skippable(r.Kind) {
		return nil
	}
	return violated("unknown record kind %q (written by a newer rein?)", r.Kind)
}

// share points what apply decoded from a record this process is writing at the memory of the
// body it was encoded from, wherever the two are equal: the state then holds no second copy of
// a message's text or a call's arguments (the kernel holds the first), and what every
// collection has to mark does not grow twice with the history. Strings only: they are
// immutable, so sharing one changes nothing either holder sees.
func (st *State) share(r ledger.Record, body any) {
	switch b := body.(type) {
	case entryBody:
		e := st.Entries[r.ID]
		if e == nil {
			return
		}
		e.Lane, e.Intent = same(e.Lane, b.Lane), same(e.Intent, b.Intent)
		if b.Message != nil {
			shareMessage(&e.Message, b.Message)
		}
	case intentBody:
		in := st.Intents[r.ID]
		if in == nil {
			return
		}
		in.Lane = same(in.Lane, b.Lane)
		in.Kind = kernel.IntentKind(same(string(in.Kind), string(b.Kind)))
		in.Replay = tool.Replay(same(string(in.Replay), string(b.Replay)))
		if in.Call != nil && b.Call != nil {
			shareCall(in.Call, b.Call)
		}
		if len(in.Reserved) == len(b.Reserved) {
			for i := range in.Reserved {
				in.Reserved[i] = same(in.Reserved[i], b.Reserved[i])
			}
		}
	}
}

func shareMessage(dst, src *llm.Message) {
	if len(dst.Content) != len(src.Content) {
		return
	}
	for i := range dst.Content {
		d, s := &dst.Content[i], &src.Content[i]
		d.Text, d.Signature = same(d.Text, s.Text), same(d.Signature, s.Signature)
		if d.Call != nil && s.Call != nil {
			shareCall(d.Call, s.Call)
		}
	}
	dst.ToolCallID, dst.ToolName = same(dst.ToolCallID, src.ToolCallID), same(dst.ToolName, src.ToolName)
}

func shareCall(dst, src *llm.ToolCall) {
	dst.ID, dst.Name, dst.Arguments = same(dst.ID, src.ID), same(dst.Name, src.Name), same(dst.Arguments, src.Arguments)
}

// same is s when it equals d (d's memory then unreferenced), else d.
func same(d, s string) string {
	if d == s {
		return s
	}
	return d
}

// decodeBlob reads a blob (the ledger checks its digest) and decodes its JSON strictly.
func decodeBlob(blob func(string) ([]byte, error), digest string, v any) error {
	data, err := blob(digest)
	if err != nil {
		return err
	}
	return decodeBody(data, v)
}

// decodeBody decodes a record body. The ledger has already checked the line strictly (valid
// UTF-8, no duplicate keys, hash chain); unknown fields are still refused here.
func decodeBody(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func laneName(s string) string {
	if s == "" {
		return MainLane
	}
	return s
}

func (st *State) addEntry(e *Entry) error {
	owner, reserved := st.reserved[e.ID]
	if reserved && owner != e.Intent {
		return violated("entry %s was reserved by intent %s but is recorded by %q", e.ID, owner, e.Intent)
	}
	if e.Intent != "" {
		in := st.Intents[e.Intent]
		if in == nil {
			return violated("entry %s settles unknown intent %s", e.ID, e.Intent)
		}
		if in.Closed != "" {
			return violated("entry %s settles intent %s, which was closed (%s)", e.ID, e.Intent, in.Closed)
		}
		if !reserved {
			return violated("entry %s settles intent %s, which did not reserve it (it reserved %v)", e.ID, e.Intent, in.Reserved)
		}
		in.Materialized = append(in.Materialized, e.ID)
		// Recorded: the id is an entry's now (st.Entries refuses reserving it again, the
		// ledger recording it twice).
		delete(st.reserved, e.ID)
	}
	l := st.lane(e.Lane)
	if !countsAttempts(e) {
		l.Attempts, l.Policy = 0, 0
	}
	if c := e.Compaction; c != nil {
		if e.Message.Role != llm.RoleUser {
			return violated("compaction entry %s is not a user message", e.ID)
		}
		onPath := false
		for _, p := range st.path(l.Leaf) {
			onPath = onPath || p.ID == c.FirstKeptID
		}
		if !onPath {
			return violated("compaction entry %s keeps from %s, which is not on the lane's path", e.ID, c.FirstKeptID)
		}
	}
	switch e.Message.Role {
	case llm.RoleUser, llm.RoleAssistant:
		if e.Parent != "" {
			p := st.Entries[e.Parent]
			if p == nil || p.Message.Role == llm.RoleTool {
				return violated("entry %s has parent %s, which is not a user or assistant entry", e.ID, e.Parent)
			}
		}
		l.Leaf = e.ID
		if e.Message.Role == llm.RoleAssistant {
			if err := st.addCalls(e); err != nil {
				return err
			}
			st.lastAsst[l.Name] = e.ID
			if e.Message.Usage != nil && !e.Forked {
				st.Usage.Add(*e.Message.Usage)
			}
		}
	case llm.RoleTool:
		p := st.Entries[e.Parent]
		if p == nil || p.Message.Role != llm.RoleAssistant || callIndex(&p.Message, e.Message.ToolCallID) < 0 {
			return violated("tool result %s (call %s) does not answer a call of its parent %s", e.ID, e.Message.ToolCallID, e.Parent)
		}
		for _, sib := range st.results[e.Parent] {
			if sib.Message.ToolCallID == e.Message.ToolCallID {
				return violated("call %s has a second result %s", e.Message.ToolCallID, e.ID)
			}
		}
		st.results[e.Parent] = append(st.results[e.Parent], e)
	default:
		return violated("entry %s has unknown role %q", e.ID, e.Message.Role)
	}
	st.Entries[e.ID] = e
	st.Order = append(st.Order, e)
	return nil
}

// addCalls indexes the tool-call ids of an answered assistant entry, refusing one whose calls
// do not have an id each, distinct within the message: such calls could not each get one
// result. (A failed message's calls are never run nor sent. An id reused from an earlier
// message is not refused: sessions written before rein assigned ids have them, and their
// results are told apart by their parents.)
func (st *State) addCalls(e *Entry) error {
	if e.Message.Failed() {
		return nil
	}
	calls := e.Message.ToolCalls()
	for i, c := range calls {
		if c.ID == "" {
			return violated("assistant entry %s: tool call %d has no id", e.ID, i)
		}
		for _, d := range calls[:i] {
			if d.ID == c.ID {
				return violated("assistant entry %s: two tool calls have the id %q", e.ID, c.ID)
			}
		}
	}
	for _, c := range calls {
		st.callIDs[c.ID] = true
	}
	return nil
}

func callIndex(m *llm.Message, callID string) int {
	for i, c := range m.ToolCalls() {
		if c.ID == callID {
			return i
		}
	}
	return -1
}

// path returns the spine from the root to leaf (user and assistant entries).
func (st *State) path(leaf string) []*Entry {
	var rev []*Entry
	for id := leaf; id != ""; {
		e := st.Entries[id]
		if e == nil {
			break
		}
		rev = append(rev, e)
		id = e.Parent
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// context returns the messages the model sees for the conversation ending at leaf: the path's
// messages (each assistant message followed by its tool results in call order), restarting at
// the last compaction on the path with its summary and the entries from its first kept entry.
// Every message carries its entry id.
func (st *State) context(leaf string) []llm.Message {
	entries := st.pathEntries(leaf)
	start, from := 0, -1
	for i := len(entries) - 1; i >= 0; i-- {
		if c := entries[i].Compaction; c != nil {
			for j := 0; j < i; j++ {
				if entries[j].ID == c.FirstKeptID {
					from = j
				}
			}
			start = i
			break
		}
	}
	var out []llm.Message
	add := func(e *Entry) {
		m := e.Message
		m.ID = e.ID
		out = append(out, m)
	}
	if from >= 0 {
		add(entries[start])
		for _, e := range entries[from:start] {
			add(e)
		}
		start++
	}
	for _, e := range entries[start:] {
		add(e)
	}
	return out
}

// openIntents returns the open intents of a lane in record order.
func (st *State) openIntents(lane string) []*Intent {
	var out []*Intent
	for _, in := range st.Intents {
		if in.Lane == lane && in.Open() {
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// Conversation returns the main lane's conversation, entries with their ids.
func (st *State) Conversation() []*Entry { return st.pathEntries(st.lane(MainLane).Leaf) }

// Leaf returns the main lane's leaf entry id.
func (st *State) Leaf() string { return st.lane(MainLane).Leaf }

// Name returns the session's name fact.
func (st *State) Name() string { return st.Facts["name"] }

// Context returns the main lane's messages as a continuing run sends them (see
// Session.Context), for readers that hold no writer lock.
func (st *State) Context() []llm.Message { return st.context(st.lane(MainLane).Leaf) }
