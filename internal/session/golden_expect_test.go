package session_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// The expected messages of the golden ledgers, written out field by field.

func wantPrompt() llm.Message {
	return llm.Message{Role: "user", Content: []llm.Part{{Type: "text", Text: "Describe this."},
		{Type: "image", MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n golden")}}, Time: 1767323045000}
}

func wantAssistant() llm.Message {
	return llm.Message{Role: "assistant", Content: []llm.Part{
		{Type: "thinking", Text: "Let me look.", Signature: "sig-thinking"},
		{Type: "thinking", Redacted: true, Signature: "encrypted-payload"},
		{Type: "text", Text: "Reading a.txt.", Signature: "sig-text"},
		{Type: "toolCall", Call: &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.txt"}`}},
		{Type: "toolCall", Call: &llm.ToolCall{ID: "c2", Name: "bash", Arguments: `{"command":"false"}`}},
	}, Provider: "anthropic", API: "anthropic-messages", Model: "claude-golden", ResponseID: "msg_01",
		Usage: &llm.Usage{Input: 100, Output: 20, CacheRead: 30, CacheWrite: 40,
			Cost: llm.Cost{Input: 0.25, Output: 0.5, CacheRead: 0.125, CacheWrite: 0.0625, Total: 0.9375}},
		StopReason: "toolUse", Time: 1767323046000}
}

func wantReadResult() llm.Message {
	return llm.Message{Role: "tool", ToolCallID: "c1", ToolName: "read",
		Content: []llm.Part{{Type: "text", Text: "A\n"}, {Type: "image", MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n golden")}},
		Details: json.RawMessage(`{"lines":1,"truncated":false}`), Time: 1767323047000}
}

func wantBashResult() llm.Message {
	return llm.Message{Role: "tool", ToolCallID: "c2", ToolName: "bash", Content: []llm.Part{{Type: "text", Text: "exit status 1"}},
		IsError: true, Time: 1767323048000}
}

func TestGoldenConversationReads(t *testing.T) {
	e := func(id, parent, intent string, seq int64, m llm.Message) session.Entry {
		return session.Entry{ID: id, Parent: parent, Lane: "main", Intent: intent, Seq: seq, Time: goldenTime(int(seq)), Message: m}
	}
	k2 := e("k2", "a3", "i-c2", 21, llm.Message{Role: "user", Content: []llm.Part{{Type: "text", Text: "Summary: the user asked about an image."}}, Time: 1767323051000})
	k2.Compaction = &kernel.CompactionInfo{FirstKeptID: "a3", TokensBefore: 420}
	want := stateView{
		Header: goldenHeader("golden-conversation", nil),
		Order: []session.Entry{
			e("u1", "", "", 5, wantPrompt()),
			e("a1", "u1", "i-m1", 7, wantAssistant()),
			e("r1", "a1", "i-t1", 10, wantReadResult()),
			e("r2", "a1", "i-t2", 12, wantBashResult()),
			e("a2", "a1", "i-m2", 15, llm.Message{Role: "assistant", Provider: "anthropic", API: "anthropic-messages", Model: "claude-golden",
				StopReason: "error", Err: &llm.Error{Kind: "rate_limit", Status: 429, Message: "slow down", Retryable: true, RetryAfterMs: 1500},
				Usage: &llm.Usage{Input: 7}, Time: 1767323049000}),
			e("a3", "a2", "i-m3", 17, llm.Message{Role: "assistant", Content: []llm.Part{{Type: "text", Text: "It is a PNG."}}, StopReason: "stop",
				Usage: &llm.Usage{Input: 200, Output: 5}, Time: 1767323050000}),
			k2,
			e("q1", "k2", "", 22, llm.Message{Role: "user", Content: []llm.Part{{Type: "text", Text: "One more thing."}}, Time: 1767323052000}),
			e("q2", "q1", "", 23, llm.Message{Role: "user", Content: []llm.Part{{Type: "text", Text: "And another."}}, Time: 1767323053000}),
		},
		Intents: []intentView{
			{ID: "i-m1", Lane: "main", Seq: 6, Kind: "model_call", Turn: 1, Reserved: reserved("a1"), Attempt: 1, Retry: &session.RetryPolicy{MaxAttempts: 3}, LastAttempt: 1, Materialized: materialized("a1")},
			{ID: "i-t1", Lane: "main", Seq: 8, Kind: "tool_call", Turn: 1, Reserved: reserved("r1"), Call: &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.txt"}`},
				Replay: tool.Replay("safe"), Materialized: materialized("r1")},
			{ID: "i-t2", Lane: "main", Seq: 11, Kind: "tool_call", Turn: 1, Reserved: reserved("r2"), Call: &llm.ToolCall{ID: "c2", Name: "bash", Arguments: `{"command":"false"}`},
				Index: 1, Replay: tool.Replay("never"), Materialized: materialized("r2")},
			{ID: "i-m2", Lane: "main", Seq: 14, Kind: "model_call", Turn: 2, Reserved: reserved("a2"), Attempt: 1, Retry: &session.RetryPolicy{MaxAttempts: 3}, LastAttempt: 1, Materialized: materialized("a2")},
			// The same context as i-m2's failed answer: its second attempt.
			{ID: "i-m3", Lane: "main", Seq: 16, Kind: "model_call", Turn: 2, Reserved: reserved("a3"), Attempt: 2, Retry: &session.RetryPolicy{MaxAttempts: 3}, LastAttempt: 2, Materialized: materialized("a3")},
			{ID: "i-c1", Lane: "main", Seq: 18, Kind: "compaction", Turn: 3, Reserved: reserved("k1"), Materialized: materialized(), Closed: "failed"},
			{ID: "i-c2", Lane: "main", Seq: 20, Kind: "compaction", Turn: 3, Reserved: reserved("k2"), Materialized: materialized("k2")},
		},
		Lanes: map[string]session.Lane{"main": {Name: "main", Leaf: "q2"}, "side": {Name: "side", Leaf: "a1"}},
		Facts: map[string]string{"name": "golden", "topic": "images"},
		// a1 + a2 + a3, the failed compaction's closing record and the recorded one's summary.
		Usage: llm.Usage{Input: 100 + 7 + 200 + 50 + 60, Output: 20 + 5 + 1 + 9, CacheRead: 30, CacheWrite: 40,
			Cost: llm.Cost{Input: 0.25, Output: 0.5, CacheRead: 0.125, CacheWrite: 0.0625, Total: 0.9375 + 0.5}},
		Created: goldenTime(1), Updated: goldenTime(25),
	}
	audit := []auditRecord{
		{3, &runRecord{Lane: "main", Event: "start"}},
		{4, &session.HookRun{Lane: "main", Hook: "global:UserPromptSubmit[0].hooks[0]", Point: "UserPromptSubmit", Outcome: "changed", DurationMs: 12}},
		{9, &session.HookRun{Lane: "main", Hook: "project:PreToolUse[0].hooks[1]", Point: "PreToolUse", Outcome: "failed", FailClosed: true, DurationMs: 5000, Detail: "timeout"}},
		{19, &closedRecord{Intent: "i-c1", Action: "failed", Usage: &llm.Usage{Input: 50, Output: 1, Cost: llm.Cost{Total: 0.5}}}},
		{24, &runRecord{Lane: "main", Event: "end", Status: "completed"}},
	}
	checkGolden(t, "conversation", want, audit)
}

func TestGoldenRecoveryReads(t *testing.T) {
	e := func(id, parent, intent string, seq int64, m llm.Message) session.Entry {
		return session.Entry{ID: id, Parent: parent, Lane: "main", Intent: intent, Seq: seq, Time: goldenTime(int(seq)), Message: m}
	}
	result := func(call, name, text string, isError bool) llm.Message {
		return llm.Message{Role: "tool", ToolCallID: call, ToolName: name, Content: []llm.Part{{Type: "text", Text: text}}, IsError: isError}
	}
	replayed := result("c1", "read", "A\n", false)
	replayed.Details = json.RawMessage(`{"replayed":true}`)
	retry := &session.RetryPolicy{MaxAttempts: 2}
	torn := sha256.Sum256([]byte(`{"v":1,"seq":`))
	want := stateView{
		Header: goldenHeader("golden-recovery", nil),
		Order: []session.Entry{
			e("u1", "", "", 3, llm.Message{Role: "user", Content: []llm.Part{{Type: "text", Text: "Do things."}}}),
			e("a1", "u1", "i-m1", 5, llm.Message{Role: "assistant", Content: []llm.Part{
				{Type: "toolCall", Call: &llm.ToolCall{ID: "c5", Name: "edit", Arguments: `{}`}},
				{Type: "toolCall", Call: &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.txt"}`}},
				{Type: "toolCall", Call: &llm.ToolCall{ID: "c3", Name: "write", Arguments: `{"path":"b.txt","content":"B"}`}},
				{Type: "toolCall", Call: &llm.ToolCall{ID: "c4", Name: "ls", Arguments: `{}`}},
			}, StopReason: "toolUse"}),
			e("r5", "a1", "i-t5", 12, result("c5", "edit", `Tool call "edit" was aborted by the user before its result was recorded.`, true)),
			e("r1", "a1", "i-t1", 13, replayed),
			e("r3", "a1", "i-t3", 14, result("c3", "write", fmt.Sprintf(session.InterruptedText, "write"), true)),
			e("g-005", "a1", "", 17, result("c4", "ls", fmt.Sprintf(session.NotStartedText, "ls"), true)),
			e("a3", "a1", "i-m3", 22, llm.Message{Role: "assistant", StopReason: "error",
				Err: &llm.Error{Kind: "network", Message: fmt.Sprintf(session.GaveUpText, 2, 2)}}),
			e("u2", "a3", "", 25, llm.Message{Role: "user", Content: []llm.Part{{Type: "text", Text: "Try again."}}}),
			e("a5", "u2", "i-m5", 32, llm.Message{Role: "assistant", StopReason: "aborted",
				Err: &llm.Error{Kind: "aborted", Message: "the model call was aborted by the user"}}),
		},
		Intents: []intentView{
			{ID: "i-m1", Lane: "main", Seq: 4, Kind: "model_call", Turn: 1, Reserved: reserved("a1"), Attempt: 1, Retry: retry, LastAttempt: 1, Materialized: materialized("a1")},
			{ID: "i-t5", Lane: "main", Seq: 6, Kind: "tool_call", Turn: 1, Reserved: reserved("r5"), Call: &llm.ToolCall{ID: "c5", Name: "edit", Arguments: `{}`},
				Replay: "never", Materialized: materialized("r5"), Cancelled: true},
			{ID: "i-t1", Lane: "main", Seq: 8, Kind: "tool_call", Turn: 1, Reserved: reserved("r1"), Call: &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.txt"}`},
				Index: 1, Replay: "safe", Materialized: materialized("r1")},
			{ID: "i-t3", Lane: "main", Seq: 9, Kind: "tool_call", Turn: 1, Reserved: reserved("r3"), Call: &llm.ToolCall{ID: "c3", Name: "write", Arguments: `{"path":"b.txt","content":"B"}`},
				Index: 2, Replay: "never", Materialized: materialized("r3")},
			{ID: "i-c1", Lane: "main", Seq: 10, Kind: "compaction", Turn: 1, Reserved: reserved("k1"), Materialized: materialized(), Closed: "abandoned"},
			{ID: "i-m2", Lane: "main", Seq: 11, Kind: "model_call", Turn: 2, Reserved: reserved("a2"), Attempt: 1, Retry: retry, LastAttempt: 1, Materialized: materialized(), Closed: "retry"},
			{ID: "i-m3", Lane: "main", Seq: 20, Kind: "model_call", Turn: 2, Reserved: reserved("a3"), Attempt: 1, Retry: retry, LastAttempt: 2, Materialized: materialized("a3")},
			{ID: "i-m4", Lane: "main", Seq: 26, Kind: "model_call", Turn: 1, Reserved: reserved("a4"), Attempt: 1, Retry: retry, LastAttempt: 1, Materialized: materialized(), Closed: "retry"},
			{ID: "i-m5", Lane: "main", Seq: 30, Kind: "model_call", Turn: 1, Reserved: reserved("a5"), Attempt: 2, Retry: retry, LastAttempt: 2, Materialized: materialized("a5"), Cancelled: true},
		},
		// The aborted a5 was the call's second and last attempt: it stays given up.
		Lanes:   map[string]session.Lane{"main": {Name: "main", Leaf: "a5", Attempts: 2, Policy: 2}},
		Facts:   map[string]string{},
		Created: goldenTime(1), Updated: goldenTime(34),
	}
	end := &runRecord{Lane: "main", Event: "end", Status: "interrupted"}
	start := &runRecord{Lane: "main", Event: "start"}
	audit := []auditRecord{
		{2, start},
		{7, &cancelRecord{Lane: "main", Intents: []string{"i-t5"}, Reason: "the user pressed Esc"}},
		{15, &closedRecord{Intent: "i-c1", Action: "abandoned", Reason: "interrupted; the context is compacted again when it next needs to be"}},
		{16, &closedRecord{Intent: "i-m2", Action: "retry", Reason: "interrupted at attempt 1 of 2"}},
		{18, end}, {19, start},
		{21, &attemptRecord{Intent: "i-m3", Attempt: 2}},
		{23, end}, {24, start},
		{27, &closedRecord{Intent: "i-m4", Action: "retry", Reason: "interrupted at attempt 1 of 2"}},
		{28, end}, {29, start},
		{31, &cancelRecord{Lane: "main", Intents: []string{"i-m5"}}},
		{33, end},
		{34, &ledger.Recovery{TruncatedBytes: 13, DiscardedSHA256: hex.EncodeToString(torn[:]), Evidence: "ledger.jsonl.torn-33"}},
	}
	checkGolden(t, "recovery", want, audit)
}

func TestGoldenForkReads(t *testing.T) {
	e := func(id, parent string, seq int64, m llm.Message) session.Entry {
		return session.Entry{ID: id, Parent: parent, Lane: "main", Seq: seq, Time: goldenTime(int(seq)), Message: m, Forked: true}
	}
	want := stateView{
		Header: goldenHeader("golden-fork", map[string]string{"parentSession": "golden-conversation", "parentEntry": "a1"}),
		Order: []session.Entry{
			e("u1", "", 2, wantPrompt()),
			e("a1", "u1", 3, wantAssistant()),
			e("r1", "a1", 4, wantReadResult()),
			e("r2", "a1", 5, wantBashResult()),
		},
		Lanes: map[string]session.Lane{"main": {Name: "main", Leaf: "a1"}},
		Facts: map[string]string{},
		// Usage: the forked entries' was spent in the parent.
		Created: goldenTime(1), Updated: goldenTime(5),
	}
	checkGolden(t, "fork", want, nil)
}
