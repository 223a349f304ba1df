package session

import (
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// FormatVersion is the version of the record bodies below.
const FormatVersion = 1

// Record kinds written by this package.
const (
	KindEntry   = "entry"   // a tree entry; id = entry id, parent = tree parent
	KindIntent  = "intent"  // an effect about to start; id = intent id
	KindAttempt = "attempt" // a retry of an open model-call intent, about to be sent
	KindClosed  = "closed"  // an intent closed without materializing its entry
	KindCancel  = "cancel"  // durable cancellation of a lane's open intents
	KindRun     = "run"     // a run started or ended in a lane
	KindFact    = "fact"    // a global fact
	KindLane    = "lane"    // a lane's leaf moved by navigation
)

// MainLane is the lane every session has.
const MainLane = "main"

// Header bindings of a session ledger.
const (
	BindFormat      = "sessionFormat"
	BindCwd         = "cwd"
	BindParent      = "parentSession" // fork: the session it was forked from
	BindParentEntry = "parentEntry"   // fork: the entry it was forked at
)

type entryBody struct {
	Lane    string       `json:"lane"`
	Intent  string       `json:"intent,omitempty"`
	Message *llm.Message `json:"message,omitempty"`
	// Blob is the digest of the message's JSON when it was too large to inline.
	Blob string `json:"blob,omitempty"`
	// Queued is the id of the queued record this entry delivers, if any.
	Queued string `json:"queued,omitempty"`
	// Compaction marks a compaction summary: the lane's context restarts with this entry's
	// message followed by the path from FirstKeptID on.
	Compaction *kernel.CompactionInfo `json:"compaction,omitempty"`
	// Usage is the cost of producing an entry that is not an assistant message (the
	// summarization requests of a compaction).
	Usage *llm.Usage `json:"usage,omitempty"`
	// Forked marks an entry copied from the parent session by a fork: its usage was spent there.
	Forked bool `json:"forked,omitempty"`
}

// RetryPolicy is the part of llm.RetryPolicy recovery needs.
type RetryPolicy struct {
	MaxAttempts int `json:"maxAttempts"`
}

type intentBody struct {
	Lane     string            `json:"lane"`
	Kind     kernel.IntentKind `json:"kind"`
	Turn     int               `json:"turn"`
	Reserved []string          `json:"reserved"`
	Call     *llm.ToolCall     `json:"call,omitempty"`
	// CallBlob is the digest of the call's JSON when it was too large to inline (Call is
	// then absent).
	CallBlob string      `json:"callBlob,omitempty"`
	Index    int         `json:"index,omitempty"`
	Replay   tool.Replay `json:"replay,omitempty"`
	// Attempt numbers a model call's first attempt within its logical call (1 when nothing was
	// tried before for the same context); Retry is the policy governing the logical call, the
	// one in force when its first attempt started.
	Attempt int          `json:"attempt,omitempty"`
	Retry   *RetryPolicy `json:"retry,omitempty"`
}

// intentFields are an intent record's fields as [Intent] shows them: the same struct without
// the record's encoder, which would otherwise be promoted to Intent and encode only its body.
type intentFields intentBody

// attemptBody records that another attempt of an open model-call intent is about to be sent
// (a retry within one process); Attempt is its number within the logical call.
type attemptBody struct {
	Intent  string `json:"intent"`
	Attempt int    `json:"attempt"`
}

// Close actions.
const (
	ActionRetry     = "retry"     // a model call abandoned by a crash; the next run retries it
	ActionFailed    = "failed"    // an effect that failed without a result (a compaction)
	ActionAbandoned = "abandoned" // a compaction interrupted by a crash; nothing to retry
)

type closedBody struct {
	Intent string `json:"intent"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// Usage is what a failed effect cost (a compaction whose summary failed).
	Usage *llm.Usage `json:"usage,omitempty"`
}

type cancelBody struct {
	Lane    string   `json:"lane"`
	Intents []string `json:"intents"`
	Reason  string   `json:"reason,omitempty"`
}

// Run events.
const (
	RunStart = "start"
	RunEnd   = "end"
)

type runBody struct {
	Lane   string `json:"lane"`
	Event  string `json:"event"`
	Status string `json:"status,omitempty"`
}

type factBody struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Blob is the digest of the value when it was too large to inline (Value is then "").
	Blob string `json:"blob,omitempty"`
}

type laneBody struct {
	Name string `json:"name"`
	Leaf string `json:"leaf"`
}
