package session_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.jsonl from the generator")

// goldenEpoch is the generator's clock: every record and generated id takes the next tick.
var goldenEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// goldenOptions fix the clock (one second a record, from goldenEpoch) and the generated ids
// (g-001, g-002…), so that the generator writes the same bytes every time.
func goldenOptions() ledger.Options {
	tick, ids := 0, 0
	return ledger.Options{
		Now:   func() time.Time { tick++; return goldenEpoch.Add(time.Duration(tick) * time.Second) },
		NewID: func() string { ids++; return fmt.Sprintf("g-%03d", ids) },
	}
}

// goldenTime is the clock's n-th tick.
func goldenTime(n int) time.Time { return goldenEpoch.Add(time.Duration(n) * time.Second) }

// goldenScenario writes one session through the public API into dir.
type goldenScenario struct {
	name  string
	write func(t *testing.T, dir string)
}

var goldenScenarios = []goldenScenario{
	{"conversation", writeConversation},
	{"recovery", writeRecovery},
	{"fork", writeFork},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var (
	goldenPNG = []byte("\x89PNG\r\n\x1a\n golden")
	callRead  = &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.txt"}`}
	callBash  = &llm.ToolCall{ID: "c2", Name: "bash", Arguments: `{"command":"false"}`}
)

// conversationAssistant is a1: thinking with a signature, redacted thinking, signed text, two
// calls, full provenance and usage.
func conversationAssistant() llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{
		{Type: llm.PartThinking, Text: "Let me look.", Signature: "sig-thinking"},
		{Type: llm.PartThinking, Redacted: true, Signature: "encrypted-payload"},
		{Type: llm.PartText, Text: "Reading a.txt.", Signature: "sig-text"},
		llm.Call(callRead.ID, callRead.Name, callRead.Arguments),
		llm.Call(callBash.ID, callBash.Name, callBash.Arguments),
	}, Provider: "anthropic", API: "anthropic-messages", Model: "claude-golden", ResponseID: "msg_01",
		Usage: &llm.Usage{Input: 100, Output: 20, CacheRead: 30, CacheWrite: 40,
			Cost: llm.Cost{Input: 0.25, Output: 0.5, CacheRead: 0.125, CacheWrite: 0.0625, Total: 0.9375}},
		StopReason: llm.StopToolUse, Time: 1767323046000}
}

// writeConversation covers a whole run: facts (one deferred to the turn boundary), hooks, user
// text and images, every kind of assistant content, tool results (with details, an image, an
// error), a failed model call, a failed and a recorded compaction, a queued settlement of two
// entries, the run's end, and a lane moved by navigation.
func writeConversation(t *testing.T, dir string) {
	ctx := context.Background()
	opts := goldenOptions()
	s, err := session.Create(dir, session.Meta{ID: "golden-conversation", Cwd: "/src/app"},
		session.Options{Ledger: opts, Retry: session.RetryPolicy{MaxAttempts: 3}})
	must(t, err)
	must(t, s.SetFact("name", "golden"))
	must(t, s.BeginRun())
	must(t, s.RecordHook(session.HookRun{Hook: "global:UserPromptSubmit[0].hooks[0]", Point: "UserPromptSubmit", Outcome: "changed", DurationMs: 12}))
	must(t, s.Settle(ctx, kernel.Settlement{Entries: []kernel.Entry{{ID: "u1", Message: llm.Message{Role: llm.RoleUser,
		Content: []llm.Part{llm.Text("Describe this."), {Type: llm.PartImage, MIMEType: "image/png", Data: goldenPNG}}, Time: 1767323045000}}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m1", Kind: kernel.IntentModelCall, Turn: 1, Reserved: []string{"a1"}}))
	must(t, s.SetFact("topic", "images")) // mid-turn: deferred to the next model call
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-m1", Entries: []kernel.Entry{{ID: "a1", Message: conversationAssistant()}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-t1", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r1"}, Call: callRead, Replay: tool.ReplaySafe}))
	must(t, s.RecordHook(session.HookRun{Hook: "project:PreToolUse[0].hooks[1]", Point: "PreToolUse", Outcome: "failed", FailClosed: true, DurationMs: 5000, Detail: "timeout"}))
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-t1", Entries: []kernel.Entry{{ID: "r1", Message: llm.Message{Role: llm.RoleTool,
		ToolCallID: "c1", ToolName: "read", Content: []llm.Part{llm.Text("A\n"), {Type: llm.PartImage, MIMEType: "image/png", Data: goldenPNG}},
		Details: json.RawMessage(`{"lines":1,"truncated":false}`), Time: 1767323047000}}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-t2", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r2"}, Call: callBash, Index: 1, Replay: tool.ReplayNever}))
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-t2", Entries: []kernel.Entry{{ID: "r2", Message: llm.Message{Role: llm.RoleTool,
		ToolCallID: "c2", ToolName: "bash", Content: []llm.Part{llm.Text("exit status 1")}, IsError: true, Time: 1767323048000}}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m2", Kind: kernel.IntentModelCall, Turn: 2, Reserved: []string{"a2"}}))
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-m2", Entries: []kernel.Entry{{ID: "a2", Message: llm.Message{Role: llm.RoleAssistant,
		Provider: "anthropic", API: "anthropic-messages", Model: "claude-golden", StopReason: llm.StopError,
		Err:   &llm.Error{Kind: llm.KindRateLimit, Status: 429, Message: "slow down", Retryable: true, RetryAfterMs: 1500},
		Usage: &llm.Usage{Input: 7}, Time: 1767323049000}}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m3", Kind: kernel.IntentModelCall, Turn: 2, Reserved: []string{"a3"}}))
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-m3", Entries: []kernel.Entry{{ID: "a3", Message: llm.Message{Role: llm.RoleAssistant,
		Content: []llm.Part{llm.Text("It is a PNG.")}, StopReason: llm.StopEnd, Usage: &llm.Usage{Input: 200, Output: 5}, Time: 1767323050000}}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-c1", Kind: kernel.IntentCompaction, Turn: 3, Reserved: []string{"k1"}}))
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-c1", Usage: &llm.Usage{Input: 50, Output: 1, Cost: llm.Cost{Total: 0.5}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-c2", Kind: kernel.IntentCompaction, Turn: 3, Reserved: []string{"k2"}}))
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-c2", Usage: &llm.Usage{Input: 60, Output: 9}, Entries: []kernel.Entry{{ID: "k2",
		Message:    llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.Text("Summary: the user asked about an image.")}, Time: 1767323051000},
		Compaction: &kernel.CompactionInfo{FirstKeptID: "a3", TokensBefore: 420}}}}))
	must(t, s.Settle(ctx, kernel.Settlement{Entries: []kernel.Entry{
		{ID: "q1", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.Text("One more thing.")}, Time: 1767323052000}},
		{ID: "q2", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.Text("And another.")}, Time: 1767323053000}},
	}}))
	must(t, s.EndRun("completed"))
	must(t, s.Close())
	// No writer moves a lane yet; the reader accepts the record, so its format is pinned too.
	l, _, err := ledger.Open(dir, opts)
	must(t, err)
	_, err = l.Append(ledger.Entry{Kind: session.KindLane, Body: json.RawMessage(`{"name":"side","leaf":"a1"}`)})
	must(t, err)
	must(t, l.Close())
}

// goldenReplayer replays read.
type goldenReplayer struct{}

func (goldenReplayer) ReplaySafe(name string) bool { return name == "read" }

func (goldenReplayer) Replay(_ context.Context, call *llm.ToolCall) llm.Message {
	return llm.Message{Role: llm.RoleTool, Content: []llm.Part{llm.Text("A\n")}, Details: json.RawMessage(`{"replayed":true}`)}
}

// writeRecovery covers a crash with every kind of open intent: a cancelled call (aborted), a
// safe call (replayed), an unsafe one (interrupted), a call never announced (not started), a
// compaction (abandoned), a model call retried, then retried in process (an attempt record)
// and given up, a new prompt's call retried and then cancelled; and a torn tail repaired on
// open.
func writeRecovery(t *testing.T, dir string) {
	ctx := context.Background()
	sopts := session.Options{Ledger: goldenOptions(), Retry: session.RetryPolicy{MaxAttempts: 2}}
	s, err := session.Create(dir, session.Meta{ID: "golden-recovery", Cwd: "/src/app"}, sopts)
	must(t, err)
	callWrite := &llm.ToolCall{ID: "c3", Name: "write", Arguments: `{"path":"b.txt","content":"B"}`}
	callEdit := &llm.ToolCall{ID: "c5", Name: "edit", Arguments: `{}`}
	must(t, s.BeginRun())
	must(t, s.Settle(ctx, kernel.Settlement{Entries: []kernel.Entry{{ID: "u1", Message: llm.UserText("Do things.")}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m1", Kind: kernel.IntentModelCall, Turn: 1, Reserved: []string{"a1"}}))
	must(t, s.Settle(ctx, kernel.Settlement{IntentID: "i-m1", Entries: []kernel.Entry{{ID: "a1", Message: llm.Message{Role: llm.RoleAssistant,
		Content: []llm.Part{llm.Call("c5", "edit", `{}`), llm.Call("c1", "read", callRead.Arguments), llm.Call("c3", "write", callWrite.Arguments),
			llm.Call("c4", "ls", `{}`)}, StopReason: llm.StopToolUse}}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-t5", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r5"}, Call: callEdit, Replay: tool.ReplayNever}))
	must(t, s.Cancel("the user pressed Esc"))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-t1", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r1"}, Call: callRead, Index: 1, Replay: tool.ReplaySafe}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-t3", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r3"}, Call: callWrite, Index: 2, Replay: tool.ReplayNever}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-c1", Kind: kernel.IntentCompaction, Turn: 1, Reserved: []string{"k1"}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m2", Kind: kernel.IntentModelCall, Turn: 2, Reserved: []string{"a2"}}))
	must(t, s.Close()) // the crash: every intent above is open
	s, _, err = session.Open(dir, sopts)
	must(t, err)
	_, err = s.Recover(ctx, goldenReplayer{})
	must(t, err)
	// The retried call (its first attempt since the not-started results changed the context)
	// is retried once in process — an attempt record — and interrupted at that last attempt:
	// recovery gives up, and the call stays given up.
	must(t, s.BeginRun())
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m3", Kind: kernel.IntentModelCall, Turn: 2, Reserved: []string{"a3"}}))
	if n, limit, err := s.Attempt(ctx, "i-m3", 2); err != nil || n != 2 || limit != 2 {
		t.Fatalf("attempt 2 of i-m3: %d of %d, %v", n, limit, err)
	}
	_, err = s.Recover(ctx, goldenReplayer{})
	must(t, err)
	if err := s.Intend(ctx, kernel.Intent{ID: "i-mx", Kind: kernel.IntentModelCall, Turn: 2, Reserved: []string{"ax"}}); err == nil {
		t.Fatal("a given-up model call was announced again")
	}
	// A new prompt starts a new call: interrupted at its first attempt, it is retried.
	must(t, s.BeginRun())
	must(t, s.Settle(ctx, kernel.Settlement{Entries: []kernel.Entry{{ID: "u2", Message: llm.UserText("Try again.")}}}))
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m4", Kind: kernel.IntentModelCall, Turn: 1, Reserved: []string{"a4"}}))
	_, err = s.Recover(ctx, goldenReplayer{})
	must(t, err)
	// A cancelled model call (its second attempt) is closed as aborted.
	must(t, s.BeginRun())
	must(t, s.Intend(ctx, kernel.Intent{ID: "i-m5", Kind: kernel.IntentModelCall, Turn: 1, Reserved: []string{"a5"}}))
	must(t, s.Cancel(""))
	_, err = s.Recover(ctx, goldenReplayer{})
	must(t, err)
	must(t, s.Close())
	// A torn last line, repaired on open.
	f, err := os.OpenFile(filepath.Join(dir, ledger.FileName), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(`{"v":1,"seq":`)
	must(t, err)
	must(t, f.Close())
	s, _, err = session.Open(dir, sopts)
	must(t, err)
	must(t, s.Close())
}

// writeFork forks the conversation at a1.
func writeFork(t *testing.T, dir string) {
	parentDir := filepath.Join(t.TempDir(), "parent")
	writeConversation(t, parentDir)
	parent, _, err := session.Load(parentDir)
	must(t, err)
	s, err := session.Fork(parent, "a1", dir, session.Meta{ID: "golden-fork", Cwd: "/src/app"}, session.Options{Ledger: goldenOptions()})
	must(t, err)
	must(t, s.Close())
}
