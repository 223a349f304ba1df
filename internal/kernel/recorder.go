package kernel

import (
	"context"
	"sync"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// IntentKind names the effect an intent announces.
type IntentKind string

const (
	IntentModelCall IntentKind = "model_call"
	IntentToolCall  IntentKind = "tool_call"
)

// Intent announces an effect before it starts. Its settlement must carry exactly the Reserved
// entry ids.
type Intent struct {
	ID       string     `json:"id"`
	Kind     IntentKind `json:"kind"`
	Turn     int        `json:"turn"`
	Reserved []string   `json:"reserved"`
	// Tool calls: which call, in which position of its batch, and whether recovery may re-run it.
	Call   *llm.ToolCall `json:"call,omitempty"`
	Index  int           `json:"index,omitempty"`
	Replay tool.Replay   `json:"replay,omitempty"`
}

// Entry is a message with the id it is recorded under.
type Entry struct {
	ID      string      `json:"id"`
	Message llm.Message `json:"message"`
	// Compaction is set when the entry is a compaction summary.
	Compaction *CompactionInfo `json:"compaction,omitempty"`
}

// Settlement records the outcome of an intent (IntentID set) or a fact that had no effect to
// announce: the user's prompt, or results the kernel produced without running anything
// (validation errors, truncated calls) — those have an empty IntentID. A settlement of an
// intent with no entries closes the intent without a result (a failed compaction).
type Settlement struct {
	IntentID string     `json:"intentId,omitempty"`
	Entries  []Entry    `json:"entries"`
	Usage    *llm.Usage `json:"usage,omitempty"`
}

// Recorder persists intents and settlements. Both methods must be durable when they return
// (a session ledger fsyncs); any error faults the run.
type Recorder interface {
	Intend(ctx context.Context, in Intent) error
	Settle(ctx context.Context, s Settlement) error
}

// Memory is a Recorder that keeps records in memory, for --no-session runs and tests.
type Memory struct {
	mu      sync.Mutex
	records []any
}

// Intend implements Recorder.
func (m *Memory) Intend(_ context.Context, in Intent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, in)
	return nil
}

// Settle implements Recorder.
func (m *Memory) Settle(_ context.Context, s Settlement) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, s)
	return nil
}

// Records returns every Intent and Settlement in the order they were recorded.
func (m *Memory) Records() []any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]any(nil), m.records...)
}

// Head implements [Positioner]: the number of records so far.
func (m *Memory) Head() (int64, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.records)), ""
}
