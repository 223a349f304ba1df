package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
)

// BlobThreshold is the size above which a payload — a message's JSON, a tool call's JSON in
// its intent, a fact's value — is stored as a blob and its record holds the digest, so that no
// record nears the ledger's line cap.
const BlobThreshold = 512 << 10

// ErrBusy is returned when a run is started in a lane that has one open.
var ErrBusy = errors.New("the lane already has an open run")

// ErrInvalidRecord is returned (wrapped, with what was wrong and the ids involved) when a write
// would record something the session's rules refuse on open: a settlement whose ids its intent
// did not reserve, a result for an unknown or already answered call, a reused id... Nothing of
// the refused write reaches the ledger and the session stays usable; the caller (rein itself) has
// a bug.
var ErrInvalidRecord = errors.New("session: refused to write an invalid record (a bug in rein; nothing was written and the session can be continued)")

// Options configure a session.
type Options struct {
	Ledger ledger.Options
	// Retry is recorded with every model-call intent: recovery retries an interrupted model
	// call while attempts remain under it.
	Retry RetryPolicy
	// ID, when set, is the session Open expects: a ledger whose header names another session
	// (one copied from elsewhere) is refused as corrupt, naming both ids.
	ID string
}

// Meta describes a new session.
type Meta struct {
	ID  string
	Cwd string
	// Parent and ParentEntry name what a fork was taken from.
	Parent      string
	ParentEntry string
}

// Session is an open session ledger: the single writer of its file.
type Session struct {
	mu       sync.Mutex
	l        *ledger.Ledger
	st       *State
	opts     Options
	lane     string
	deferred []factBody
	inTurn   bool
}

// Create makes a new session in dir. Nothing is fsynced yet: the session (its header, the facts
// set before its first run, the run's start, its directory entries) becomes durable with its
// first intent's fsync, or with Sync, EndRun or Close — a power loss before then leaves no
// session, or one that never completely existed (ledger.ErrIncomplete), or its durable prefix.
func Create(dir string, meta Meta, opts Options) (*Session, error) {
	h := ledger.Header{Type: ledger.TypeSession, ID: meta.ID, Bindings: map[string]string{
		BindFormat: fmt.Sprint(FormatVersion), BindCwd: meta.Cwd}}
	if meta.Parent != "" {
		h.Bindings[BindParent] = meta.Parent
		h.Bindings[BindParentEntry] = meta.ParentEntry
	}
	lo := opts.Ledger
	lo.Deferred = true
	// The state is built from the header record as Create writes it, not by reading the new
	// file back.
	var rec ledger.Record
	lo.Visit = func(r ledger.Record) error { rec = r; return nil }
	l, err := ledger.Create(dir, h, lo)
	if err != nil {
		return nil, err
	}
	st := newState(l.Header())
	if err := st.apply(rec, l.Blob, nil); err != nil {
		l.Close()
		return nil, corrupt(rec, err)
	}
	return &Session{l: l, st: st, opts: opts, lane: MainLane}, nil
}

// reload rebuilds the state from the ledger's records. Callers hold s.mu (or s is not shared).
func (s *Session) reload() error {
	st := newState(s.l.Header())
	for r, err := range s.l.Records() {
		if err != nil {
			return err
		}
		if err := st.apply(r, s.l.Blob, nil); err != nil {
			return corrupt(r, err)
		}
	}
	s.st = st
	return nil
}

// Open opens the session in dir for writing: the ledger is verified (a torn tail repaired, see
// the report) and reduced, in one pass over the file; any violation of the session's
// invariants fails closed.
func Open(dir string, opts Options) (*Session, *ledger.Report, error) {
	red := &reducer{dir: dir, opts: opts.Ledger, want: opts.ID}
	l, rep, err := ledger.Open(dir, red.options())
	if err != nil {
		return nil, nil, err
	}
	st, err := red.state()
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return &Session{l: l, st: st, opts: opts, lane: MainLane}, rep, nil
}

// Load reads the session in dir without taking the writer lock (for show, ls, export).
func Load(dir string) (*State, *ledger.Report, error) { return LoadAs(dir, "") }

// LoadAs is Load of the session id: a ledger whose header names another session is refused as
// corrupt, naming both ids ("" checks nothing, as Load).
func LoadAs(dir, id string) (*State, *ledger.Report, error) {
	red := &reducer{dir: dir, want: id}
	l, rep, err := ledger.OpenReadOnly(dir, red.options())
	if err != nil {
		return nil, nil, err
	}
	l.Close()
	st, err := red.state()
	if err != nil {
		return nil, nil, err
	}
	return st, rep, nil
}

// reducer folds a session's records into its State in the pass that verifies the ledger (as
// its Visit), so that the file is read once. Errors are as if the ledger were verified first
// and reduced after: a violation is kept and reported only once the ledger has opened (a
// corrupt ledger, and a torn tail's repair, take precedence), and nothing after it is applied.
type reducer struct {
	dir  string
	want string // the session id the header must name ("" checks nothing)
	opts ledger.Options
	st   *State
	err  error // the first violation
}

// options are r.opts with r as the Visit (after a Visit the caller had set).
func (r *reducer) options() ledger.Options {
	o := r.opts
	visit := o.Visit
	o.Visit = func(rec ledger.Record) error {
		r.visit(rec)
		if visit != nil {
			return visit(rec)
		}
		return nil
	}
	return o
}

func (r *reducer) visit(rec ledger.Record) {
	if r.err != nil {
		return
	}
	if r.st == nil {
		r.st, r.err = newSessionState(r.dir, r.want, rec)
		if r.err != nil {
			return
		}
	}
	if err := r.st.apply(rec, r.blob, nil); err != nil {
		r.err = corrupt(rec, err)
	}
}

func (r *reducer) blob(digest string) ([]byte, error) { return ledger.ReadBlob(r.dir, digest, r.opts) }

// state is the reduced session, or why it is not one.
func (r *reducer) state() (*State, error) {
	if r.err == nil && r.st == nil {
		r.err = fmt.Errorf("%w: %s has no header", ledger.ErrCorrupt, r.dir)
	}
	return r.st, r.err
}

// newSessionState starts the state of the session whose first record (the ledger's header, as
// the ledger verified it) is rec; want, when set, is the id the header must name.
func newSessionState(dir, want string, rec ledger.Record) (*State, error) {
	var h ledger.Header
	if err := json.Unmarshal(rec.Body, &h); err != nil {
		return nil, fmt.Errorf("%w: %s: header: %w", ledger.ErrCorrupt, dir, err)
	}
	if h.Type != ledger.TypeSession {
		return nil, fmt.Errorf("%w: %s is a %s ledger, not a session", ledger.ErrCorrupt, dir, h.Type)
	}
	if want != "" && h.ID != want {
		return nil, fmt.Errorf("%w: %s is the directory of session %s, but its ledger's header names session %s (a ledger copied from another session?)",
			ledger.ErrCorrupt, dir, want, h.ID)
	}
	if v := h.Bindings[BindFormat]; v != fmt.Sprint(FormatVersion) {
		return nil, fmt.Errorf("%w: session format %q is not supported (this rein reads %d)", ledger.ErrCorrupt, v, FormatVersion)
	}
	return newState(h), nil
}

func (s *Session) newID() string {
	if s.opts.Ledger.NewID != nil {
		return s.opts.Ledger.NewID()
	}
	return kernel.NewID()
}

// ID returns the session id.
func (s *Session) ID() string { return s.st.Header.ID }

// Dir returns the session's directory.
func (s *Session) Dir() string { return s.l.Dir() }

// Head returns the ledger's head (seq, hash): its position, and an anchor once the records up
// to it are durable — after EndRun, Sync or Close, or a write outside a run (results and
// bookkeeping within a run ride on the next intent's fsync).
func (s *Session) Head() (int64, string) { return s.l.Head() }

// CheckAnchor verifies that the ledger still holds the record seq with hash h (see
// ledger.Ledger.CheckAnchor): an error wrapping ledger.ErrRollback otherwise.
func (s *Session) CheckAnchor(seq int64, h string) error { return s.l.CheckAnchor(seq, h) }

// Sync makes every record written so far durable.
func (s *Session) Sync() error { return s.l.Sync() }

// Close closes the ledger, syncing what is pending.
func (s *Session) Close() error { return s.l.Close() }

// Context returns the messages of the current lane, as the model will see them.
func (s *Session) Context() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.context(s.st.lane(s.lane).Leaf)
}

// State returns a snapshot summary: usage, facts and counts.
func (s *Session) Usage() llm.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Usage
}

// append writes records as one unit and folds them into the state. Each record is checked
// before anything is written, exactly as Open will check it: the ledger builds it and hands it
// to the reducer's apply, in order, against the state the records before it leave. A record
// apply refuses (or one the ledger refuses, a reused id) refuses them all: nothing is written,
// the state is rebuilt from the ledger, and the error wraps ErrInvalidRecord. Callers hold s.mu.
func (s *Session) append(es ...ledger.Entry) error {
	applied := 0
	_, err := s.l.AppendAll(es, func(r ledger.Record) error {
		applied++
		if err := s.st.apply(r, s.l.Blob, es[applied-1].Body); err != nil {
			return fmt.Errorf("%w: %s record %s: %w", ErrInvalidRecord, r.Kind, r.ID, err)
		}
		s.st.share(r, es[applied-1].Body)
		return nil
	})
	if err == nil {
		return nil
	}
	if errors.Is(err, ledger.ErrDuplicateID) || errors.Is(err, ledger.ErrUnknownParent) {
		err = fmt.Errorf("%w: %w", ErrInvalidRecord, err)
	}
	if applied > 0 {
		// apply changed the state for records that were not written (refused, or the write
		// failed): the ledger holds the truth.
		if rerr := s.reload(); rerr != nil {
			return errors.Join(err, fmt.Errorf("session: rebuilding the state after a failed write: %w", rerr))
		}
	}
	return err
}

// BeginRun opens a run in the lane; a lane has at most one open run.
func (s *Session) BeginRun() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.lane(s.lane).RunOpen {
		return fmt.Errorf("%w: lane %q (recover or end it first)", ErrBusy, s.lane)
	}
	// Bookkeeping: durable with the run's first intent, before any effect.
	return s.append(ledger.Entry{Kind: KindRun, Body: runBody{Lane: s.lane, Event: RunStart}, NoSync: true})
}

// EndRun applies deferred writes and closes the lane's run with a status; everything the run
// wrote is durable when it returns.
func (s *Session) EndRun(status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inTurn = false
	if err := s.flushLocked(); err != nil {
		return err
	}
	if !s.st.lane(s.lane).RunOpen {
		return s.l.Sync() // what the run left pending (its last results) is durable at its end
	}
	return s.append(ledger.Entry{Kind: KindRun, Body: runBody{Lane: s.lane, Event: RunEnd, Status: status}})
}

// SetFact records a global fact, durably before it returns — except while a turn is in flight,
// when the write is deferred to the turn boundary, and in a new session not yet durable
// itself (see Create), where the fact becomes durable with the session.
func (s *Session) SetFact(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := factBody{Key: key, Value: value}
	if len(value) > BlobThreshold {
		digest, err := s.l.PutBlob([]byte(value))
		if err != nil {
			return err
		}
		f.Value, f.Blob = "", digest
	}
	if s.inTurn {
		s.deferred = append(s.deferred, f)
		return nil
	}
	seq, _ := s.l.Durable()
	return s.append(ledger.Entry{Kind: KindFact, Body: f, NoSync: seq == 0})
}

func (s *Session) flushLocked() error {
	for len(s.deferred) > 0 {
		f := s.deferred[0]
		// Flushed right before a model-call intent or a run's end, whose fsync it rides on.
		if err := s.append(ledger.Entry{Kind: KindFact, Body: f, NoSync: true}); err != nil {
			return err
		}
		s.deferred = s.deferred[1:]
	}
	return nil
}

// Fact returns a global fact.
func (s *Session) Fact(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Facts[key]
}

// Intend implements kernel.Recorder: the intent is fsynced before it returns. A model-call
// intent is a turn boundary: deferred writes are applied first. It is also the first attempt
// of this process at the lane's logical model call (see [Session.Attempt]): it records the
// attempt's number, counted from the ledger, and the call's policy — the one recorded by the
// call's first attempt, Options.Retry for a new call. When the call has used that policy's
// attempts, nothing is written and the error is a *kernel.GaveUpError.
func (s *Session) Intend(_ context.Context, in kernel.Intent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := intentBody{Lane: s.lane, Kind: in.Kind, Turn: in.Turn, Reserved: in.Reserved, Call: in.Call, Index: in.Index, Replay: in.Replay}
	if in.Call != nil && maxCallJSONSize(in.Call) > BlobThreshold {
		if raw := in.Call.AppendJSON(nil); len(raw) > BlobThreshold {
			digest, err := s.l.PutBlob(raw)
			if err != nil {
				return err
			}
			b.Call, b.CallBlob = nil, digest
		}
	}
	if in.Kind == kernel.IntentModelCall {
		l := s.st.lane(s.lane)
		limit := l.Policy
		if l.Attempts == 0 {
			limit = max(1, s.opts.Retry.MaxAttempts)
		}
		if l.Attempts >= limit {
			return s.gaveUpLocked()
		}
		s.inTurn = false
		if err := s.flushLocked(); err != nil {
			return err
		}
		s.inTurn = true
		b.Attempt = l.Attempts + 1
		b.Retry = &RetryPolicy{MaxAttempts: limit}
	}
	// A local call's intent rides on the next fsync (kernel.Recorder): a read nobody outside the
	// process sees needs no durable trace before it runs.
	return s.append(ledger.Entry{Kind: KindIntent, ID: in.ID, Body: b, NoSync: in.Kind == kernel.IntentToolCall && in.Local})
}

// Attempt implements kernel.AttemptRecorder for the open model-call intent: try 1 is the
// intent itself; every later try is recorded (an attempt record, fsynced) before Attempt
// returns. Attempts are numbered within the lane's logical call, over every process that
// worked on it; once the call's recorded policy is used up nothing is written and the error is
// a *kernel.GaveUpError.
func (s *Session) Attempt(_ context.Context, intent string, try int) (attempt, maxAttempts int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.st.Intents[intent]
	if in == nil || in.Kind != kernel.IntentModelCall || !in.Open() || in.Lane != s.lane {
		return 0, 0, fmt.Errorf("%w: attempt of intent %s, which is not an open model call of lane %q", ErrInvalidRecord, intent, s.lane)
	}
	l := s.st.lane(s.lane)
	if try <= 1 {
		return l.Attempts, l.Policy, nil
	}
	if l.Attempts >= l.Policy {
		return 0, 0, s.gaveUpLocked()
	}
	if err := s.append(ledger.Entry{Kind: KindAttempt, Body: attemptBody{Intent: intent, Attempt: l.Attempts + 1}}); err != nil {
		return 0, 0, err
	}
	return l.Attempts, l.Policy, nil
}

// GaveUp returns a *kernel.GaveUpError when the lane waits for a model call that has used
// every attempt of its recorded retry policy (nil otherwise): a continuation does not send it
// again; a new prompt starts a new call.
func (s *Session) GaveUp() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.st.lane(s.lane)
	if l.Attempts == 0 || l.Attempts < l.Policy || len(s.st.openIntents(s.lane)) > 0 {
		return nil
	}
	return s.gaveUpLocked()
}

// gaveUpLocked describes the lane's given-up call, with the error its last attempt ended with.
func (s *Session) gaveUpLocked() error {
	l := s.st.lane(s.lane)
	e := &kernel.GaveUpError{Attempts: l.Attempts, MaxAttempts: l.Policy}
	if leaf := s.st.Entries[l.Leaf]; leaf != nil && leaf.Message.Role == llm.RoleAssistant && leaf.Message.Failed() {
		e.Last = leaf.Message.Err
	}
	return e
}

// Settle implements kernel.Recorder. The settlement is written before Settle returns and
// becomes durable with the next intent's fsync (group commit), or with EndRun, Sync or Close: nothing outside the process acts on a result before one of those, since every effect
// starts only after its own intent is durable. A power loss before then loses the result, and
// recovery treats its intent as one whose outcome is unknown (see Recover).
func (s *Session) Settle(_ context.Context, set kernel.Settlement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	usage := set.Usage
	if usage != nil && usage.Total() == 0 && usage.Cost.Total == 0 {
		usage = nil
	}
	if set.IntentID != "" && len(set.Entries) == 0 {
		return s.append(ledger.Entry{Kind: KindClosed, Body: closedBody{Intent: set.IntentID, Action: ActionFailed, Usage: usage}, NoSync: true})
	}
	// The entries are written as one unit, each parented as the state will be after the
	// ones before it.
	es := make([]ledger.Entry, 0, len(set.Entries))
	cur := s.cursor()
	for i, e := range set.Entries {
		var u *llm.Usage
		// An assistant message carries its own usage; anything else (a compaction summary)
		// carries the settlement's on its first entry.
		if i == 0 && e.Message.Role != llm.RoleAssistant {
			u = usage
		}
		le, err := s.entry(e.ID, cur.parent(e.ID, e.Message.Role), set.IntentID, e.Message, entryExtra{compaction: e.Compaction, usage: u})
		if err != nil {
			return err
		}
		le.NoSync = true
		es = append(es, le)
	}
	return s.append(es...)
}

// entryExtra is what an entry may carry besides its message.
type entryExtra struct {
	compaction *kernel.CompactionInfo
	usage      *llm.Usage
	forked     bool
}

// cursor is where the lane's next entries attach: a tool result to the last assistant message,
// anything else to the leaf.
type cursor struct{ leaf, asst string }

func (s *Session) cursor() cursor {
	return cursor{leaf: s.st.lane(s.lane).Leaf, asst: s.st.lastAsst[s.lane]}
}

// parent returns the parent of a message of role recorded as id, and moves past it.
func (c *cursor) parent(id string, role llm.Role) string {
	if role == llm.RoleTool {
		return c.asst
	}
	p := c.leaf
	c.leaf = id
	if role == llm.RoleAssistant {
		c.asst = id
	}
	return p
}

// addEntry records a message under id in the current lane. Callers hold s.mu.
func (s *Session) addEntry(id, intent string, m llm.Message, x entryExtra) error {
	cur := s.cursor()
	e, err := s.entry(id, cur.parent(id, m.Role), intent, m, x)
	if err != nil {
		return err
	}
	return s.append(e)
}

// entry builds the record of a message (storing a large one as a blob first: a refused record
// may leave its blob behind, which nothing references). A forked copy is not synced on its
// own: Fork syncs the copies together.
func (s *Session) entry(id, parent, intent string, m llm.Message, x entryExtra) (ledger.Entry, error) {
	body := entryBody{Lane: s.lane, Intent: intent, Message: &m, Compaction: x.compaction, Usage: x.usage, Forked: x.forked}
	if maxJSONSize(m) <= BlobThreshold {
		// Certainly inline: the record's encoding (by the ledger) is the only one.
		return ledger.Entry{Kind: KindEntry, ID: id, Parent: parent, Body: body, NoSync: x.forked}, nil
	}
	raw, err := m.AppendJSON(nil)
	if err != nil {
		return ledger.Entry{}, fmt.Errorf("session: encoding message %s: %w", id, err)
	}
	if len(raw) > BlobThreshold {
		digest, err := s.l.PutBlob(raw)
		if err != nil {
			return ledger.Entry{}, err
		}
		body.Message, body.Blob = nil, digest
	}
	return ledger.Entry{Kind: KindEntry, ID: id, Parent: parent, Body: body, NoSync: x.forked}, nil
}

// maxJSONSize bounds the length of m's JSON encoding from above without encoding it: every
// string byte takes at most 6 (a \u00XX escape; so does a byte of the raw details, where
// encoding/json escapes < > & and U+2028/U+2029), the bytes of an image 4/3 (base64), and the
// member names, numbers (the usage) and punctuation less than 1024 a message and 256 a part
// (TestMaxJSONSizeBoundsTheEncoding keeps it so when the message types change).
func maxJSONSize(m llm.Message) int {
	n := 1024 + 6*(len(m.Provider)+len(m.API)+len(m.Model)+len(m.ResponseID)+len(m.StopReason)+len(m.ToolCallID)+len(m.ToolName)) + 6*len(m.Details)
	if m.Err != nil {
		n += 256 + 6*(len(m.Err.Kind)+len(m.Err.Message))
	}
	for _, p := range m.Content {
		n += 256 + 6*(len(p.Type)+len(p.Text)+len(p.Signature)+len(p.MIMEType)) + 4*len(p.Data)/3 + 4
		if p.Call != nil {
			n += maxCallJSONSize(p.Call)
		}
	}
	return n
}

func maxCallJSONSize(c *llm.ToolCall) int {
	return 256 + 6*(len(c.ID)+len(c.Name)+len(c.Arguments)+len(c.ProviderID))
}

// Cancel durably records the cancellation of the lane's open intents. Call it before
// signalling the running effects (cancelling their context). It is idempotent.
func (s *Session) Cancel(reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, in := range s.st.openIntents(s.lane) {
		if !in.Cancelled {
			ids = append(ids, in.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return s.append(ledger.Entry{Kind: KindCancel, Body: cancelBody{Lane: s.lane, Intents: ids, Reason: reason}})
}

// CallIDUsed implements kernel.CallIDs: whether a tool call with this id is recorded in an
// answered assistant message of the session (any lane).
func (s *Session) CallIDUsed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.callIDs[id]
}

// Has reports whether an intent or entry with this id is recorded.
func (s *Session) Has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Entries[id] != nil || s.st.Intents[id] != nil
}
