package kernel

import (
	"context"
	"fmt"
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
	// Local: the call is to a tool that is both [tool.Spec].Local and replay-safe; its intent
	// may become durable with the next fsync (see [Recorder]).
	Local bool `json:"local,omitempty"`
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

// Recorder persists intents and settlements; any error faults the run. An intent must be
// durable when Intend returns (the effect starts right after), except a local call's
// ([Intent].Local: a replay-safe read nobody outside the process sees), which may become
// durable with the next intent, as a settlement does: a power loss that drops it drops the
// model's answer that asked for the call too (they ride on the same fsync), and one that keeps
// it without its result leaves an intent that recovery replays. A settlement may become durable
// with the next intent, or when the run ends, as long as nothing outside the process acts on it
// before (a session ledger's group commit); a recorder that loses it in a power loss leaves its
// intent open, which recovery settles as an effect of unknown outcome.
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

// AttemptRecorder is an optional capability of a [Recorder] (looked up through Unwrap()
// Recorder like [Positioner]): it numbers the attempts of a model call durably, across the
// retries of one process and across processes (a session ledger). The kernel hands it to the
// model's retry decorator ([llm.WithAttempts]), so every request is preceded by a durable
// record: the intent for the first attempt, an attempt record for each retry. Without one,
// retries are counted in memory by the retry policy alone.
type AttemptRecorder interface {
	// Attempt is called before try (1, 2…) of the model call announced by intent is sent. Try 1
	// is announced by the intent itself; every later try is recorded durably before Attempt
	// returns. It returns the attempt's number within the logical call — every attempt at
	// answering the same context, whatever process made it — and the call's attempt limit
	// (the retry policy recorded when the call started). When no attempt is left it records
	// nothing and returns a *GaveUpError.
	Attempt(ctx context.Context, intent string, try int) (attempt, maxAttempts int, err error)
}

// GaveUpError is returned by a Recorder (Intend for a model call, or Attempt) when the model
// call it would announce has used every attempt of the retry policy recorded when it started:
// nothing was recorded and nothing may be sent. The run ends with a *ModelError (see
// [GaveUpError.ModelError]); only a new prompt starts a new call.
type GaveUpError struct {
	Attempts    int
	MaxAttempts int
	// Last is the error the call's last attempt ended with, when one was recorded.
	Last *llm.Error
}

func (e *GaveUpError) Error() string {
	last := ""
	if e.Last != nil {
		last = e.Last.Error()
	}
	return e.text(last)
}

func (e *GaveUpError) text(last string) string {
	s := fmt.Sprintf("the model call gave up after %d attempts (its retry policy allows %d) and is not sent again", e.Attempts, e.MaxAttempts)
	if last != "" {
		s += "; last error: " + last
	}
	return s + "; give a new prompt to go on"
}

// ModelError is the provider error a run that met e ends with: the last attempt's kind and
// status (network when none was recorded), not retryable, with e's explanation.
func (e *GaveUpError) ModelError() *llm.Error {
	if e.Last == nil {
		return &llm.Error{Kind: llm.KindNetwork, Message: e.text("")}
	}
	return &llm.Error{Kind: e.Last.Kind, Status: e.Last.Status, Message: e.text(e.Last.Message)}
}

// attemptRecorder returns the recorder's AttemptRecorder, looking through wrappers; nil when
// none has the capability.
func attemptRecorder(rec Recorder) AttemptRecorder {
	a, _ := capability[AttemptRecorder](rec)
	return a
}
