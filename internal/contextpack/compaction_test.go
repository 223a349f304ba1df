package contextpack

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

func text(role llm.Role, n int) llm.Message {
	m := llm.Message{Role: role, Content: []llm.Part{llm.Text(strings.Repeat("x", n*4))}}
	if role == llm.RoleTool {
		m.ToolCallID, m.ToolName = "c", "read"
	}
	return m
}

func withCall(n int) llm.Message {
	m := text(llm.RoleAssistant, n)
	m.Content = append(m.Content, llm.Call("c", "read", `{"path":"a.txt"}`))
	return m
}

func TestCutPoint(t *testing.T) {
	U, A, T := llm.RoleUser, llm.RoleAssistant, llm.RoleTool
	for _, tc := range []struct {
		name      string
		msgs      []llm.Message
		keep      int
		cut, turn int
	}{
		{"cut at a user message", []llm.Message{text(U, 10), text(A, 10), text(U, 10), text(A, 10)}, 20, 2, 2},
		{"never at a tool result: move forward", []llm.Message{text(U, 10), withCall(10), text(T, 30), text(A, 5)}, 30, 3, 0},
		{"split turn: cut inside a turn", []llm.Message{text(U, 10), withCall(10), text(T, 10), withCall(10), text(T, 10), text(A, 10)}, 25, 3, 0},
		{"everything fits: nothing to cut", []llm.Message{text(U, 10), text(A, 10)}, 100, -1, -1},
		{"only the first message would remain before the cut", []llm.Message{text(U, 50), text(A, 10)}, 60, -1, -1},
		{"repeated compaction: a summary message is a valid cut", []llm.Message{text(U, 10), text(A, 40), text(U, 10), text(A, 10)}, 15, 2, 2},
	} {
		cut, turn := CutPoint(tc.msgs, tc.keep)
		if cut != tc.cut || turn != tc.turn {
			t.Errorf("%s: CutPoint = (%d, %d), want (%d, %d)", tc.name, cut, turn, tc.cut, tc.turn)
		}
		if cut > 0 && tc.msgs[cut].Role == T {
			t.Errorf("%s: cut at a tool result", tc.name)
		}
	}
}

func TestContextTokensUsesReportedUsage(t *testing.T) {
	a := text(llm.RoleAssistant, 10)
	a.Usage = &llm.Usage{Input: 900, Output: 100}
	msgs := []llm.Message{text(llm.RoleUser, 5000), a, text(llm.RoleUser, 25)}
	if got := ContextTokens(msgs); got != 1025 {
		t.Errorf("ContextTokens = %d, want 1000 reported + 25 estimated", got)
	}
}

func TestCompactSplitTurnAndFileLists(t *testing.T) {
	model, err := script.Parse([]byte(`
version: 1
dialogs:
  - match: "Original Request"
    turns: [{text: "## Original Request\nfix it"}]
  - match: "<conversation>"
    turns: [{text: "## Goal\nhistory"}]
`), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := withCall(10)
	w.Content[1] = llm.Call("c", "write", `{"path":"b.go"}`)
	msgs := []llm.Message{text(llm.RoleUser, 10), withCall(10), text(llm.RoleTool, 10), text(llm.RoleAssistant, 10),
		text(llm.RoleUser, 10), w, text(llm.RoleTool, 10), withCall(10), text(llm.RoleTool, 10), text(llm.RoleAssistant, 10)}
	out, err := Compact(context.Background(), model, msgs, 25, DefaultReserveTokens, "")
	if err != nil {
		t.Fatal(err)
	}
	if out.FirstKept != 7 {
		t.Fatalf("FirstKept = %d, want 7 (inside the second turn)", out.FirstKept)
	}
	for _, want := range []string{"## Goal\nhistory", "**Turn Context (split turn):**", "## Original Request\nfix it",
		"<read-files>\na.txt\n</read-files>", "<modified-files>\nb.go\n</modified-files>"} {
		if !strings.Contains(out.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, out.Summary)
		}
	}
	if m := out.Message(); m.Role != llm.RoleUser || !strings.HasPrefix(m.Text(), SummaryPrefix) {
		t.Errorf("summary message %+v", m)
	}
}

func TestSerializeCapsToolResults(t *testing.T) {
	long := text(llm.RoleTool, 1000) // 4000 chars
	s := Serialize([]llm.Message{long})
	if !strings.Contains(s, "[... 2000 more characters truncated]") || len(s) > SummaryResultCap+100 {
		t.Errorf("tool result not capped: %d bytes", len(s))
	}
}
