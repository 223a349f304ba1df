package tool

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/llm"
)

// Replay declares whether a tool may be re-run by crash recovery when its outcome is unknown.
type Replay string

const (
	// ReplayNever: an interrupted run is closed with a synthetic "interrupted" result.
	ReplayNever Replay = "never"
	// ReplaySafe: running the tool again with the same arguments is harmless (idempotent reads).
	ReplaySafe Replay = "safe"
)

// Spec describes a tool to the model and to the kernel.
type Spec struct {
	Name        string
	Description string
	// Snippet is the one line shown in the system prompt's tool list.
	Snippet string
	// Brief, when set, is a short description that still says what a call needs to be right
	// (argument meanings, defaults, limits): [Brief] offers it, with the schema's descriptions
	// dropped, to agents whose requests must stay small.
	Brief string
	// Schema is the JSON Schema of the arguments object. Validation is strict: unknown
	// fields, duplicate keys, keys differing only in case and invalid UTF-8 are rejected.
	Schema json.RawMessage
	// Sequential forces the whole batch containing a call to this tool to run one call at a
	// time (tools that mutate shared state).
	Sequential bool
	Replay     Replay
	// Local declares that a call has no effect anyone outside rein's process can see: it only
	// reads regular files, itself or through a child process it runs and waits for (grep's
	// ripgrep). Such a call's intent need not be durable before it runs: it becomes durable with
	// the next fsync, with the call's result (see kernel.Recorder). It counts only together with
	// ReplaySafe. A tool that talks to another process (an MCP server) is never local.
	Local bool
}

// Tool is one capability the model can call.
type Tool interface {
	Spec() Spec
	// Run executes a validated call. An error is turned into an error result the model sees
	// (its message must say what went wrong and what to do); a Result with IsError set
	// reports a failure that still carries content and details (a failing command's output).
	// Run must return promptly when ctx is cancelled, killing whatever it started.
	Run(ctx context.Context, call Call) (Result, error)
}

// Call is one validated invocation.
type Call struct {
	ID string
	// Args is the arguments object, already validated against the tool's schema.
	Args json.RawMessage
	// Update, if not nil, receives partial results (e.g. streaming command output); each
	// update is the accumulated result so far, not a delta.
	Update func(Result)
}

// Result is what a tool returns.
type Result struct {
	Content []llm.Part
	// Details is structured data for UIs and logs (truncation, diff, exit code); never sent
	// to the model.
	Details any
	IsError bool
}

// TextResult returns a result holding one text part.
func TextResult(s string) Result { return Result{Content: []llm.Part{llm.Text(s)}} }
