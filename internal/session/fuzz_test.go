package session_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
)

// FuzzReduce appends arbitrary session records (kind|id|parent|body, one a line) to a valid
// ledger and reduces it: reduction never panics, and either fails closed with a corruption
// error or yields a state whose every tool result answers a call of its parent.
func FuzzReduce(f *testing.F) {
	f.Add("run|r1||{\"lane\":\"main\",\"event\":\"start\"}\n" +
		"entry|e1||{\"lane\":\"main\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n" +
		"intent|i1||{\"lane\":\"main\",\"kind\":\"model_call\",\"turn\":1,\"reserved\":[\"e2\"],\"attempt\":1,\"retry\":{\"maxAttempts\":2}}\n" +
		"entry|e2|e1|{\"lane\":\"main\",\"intent\":\"i1\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"call\":{\"id\":\"c1\",\"name\":\"read\",\"arguments\":\"{}\"}}],\"stopReason\":\"toolUse\"}}\n" +
		"intent|i2||{\"lane\":\"main\",\"kind\":\"tool_call\",\"turn\":1,\"reserved\":[\"e3\"],\"call\":{\"id\":\"c1\",\"name\":\"read\",\"arguments\":\"{}\"},\"replay\":\"safe\"}\n" +
		"entry|e3|e2|{\"lane\":\"main\",\"intent\":\"i2\",\"message\":{\"role\":\"tool\",\"toolCallId\":\"c1\",\"toolName\":\"read\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}}\n" +
		"closed|x1||{\"intent\":\"i1\",\"action\":\"retry\"}\n" +
		"cancel|x2||{\"lane\":\"main\",\"intents\":[\"i2\"]}\n" +
		"fact|x3||{\"key\":\"name\",\"value\":\"n\"}\n" +
		"lane|x4||{\"name\":\"main\",\"leaf\":\"e1\"}\n" +
		"run|r2||{\"lane\":\"main\",\"event\":\"end\",\"status\":\"completed\"}\n")
	f.Add("entry|e1|zz|{\"message\":{\"role\":\"tool\",\"toolCallId\":\"q\"}}\n")
	f.Add("intent|i1||{\"kind\":\"tool_call\",\"reserved\":[\"a\",\"a\"]}\nentry|a||{\"intent\":\"i1\",\"message\":{\"role\":\"user\"}}\n")
	f.Add("x-future|f1||{\"anything\":1}\nmystery|m1||{}\n")
	f.Fuzz(func(t *testing.T, script string) {
		dir := filepath.Join(t.TempDir(), "s")
		s, err := session.Create(dir, session.Meta{ID: "fuzz"}, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		l, _, err := ledger.Open(dir, ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(script, "\n") {
			parts := strings.SplitN(line, "|", 4)
			if len(parts) != 4 {
				continue
			}
			// Invalid kinds, ids, parents or bodies are refused by the ledger: skip those.
			_, _ = l.Append(ledger.Entry{Kind: parts[0], ID: parts[1], Parent: parts[2], Body: jsonRaw(parts[3]), NoSync: true})
		}
		l.Close()
		st, _, err := session.Load(dir)
		if err != nil {
			if !errors.Is(err, ledger.ErrCorrupt) {
				t.Fatalf("reduction failed with a non-corruption error: %v", err)
			}
			return
		}
		msgs := st.Conversation()
		for _, e := range msgs {
			if e.Message.Role != llm.RoleTool {
				continue
			}
			p := st.Entries[e.Parent]
			found := false
			for _, c := range p.Message.ToolCalls() {
				found = found || c.ID == e.Message.ToolCallID
			}
			if !found {
				t.Fatalf("tool result %s answers no call of its parent %s", e.ID, e.Parent)
			}
		}
	})
}
