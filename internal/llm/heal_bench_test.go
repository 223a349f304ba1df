package llm

import (
	"fmt"
	"strings"
	"testing"
)

// loopHistory is the history of a read loop after turns tool turns: a user message, then for
// each turn an assistant message with one tool call and its ~400-byte result.
func loopHistory(turns int) []Message {
	msgs := []Message{UserText("Work through the task step by step.")}
	body := strings.Repeat("// Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n", 6)
	for i := range turns {
		c := &ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "read", Arguments: fmt.Sprintf(`{"path":"data/file-%d.txt"}`, i)}
		msgs = append(msgs,
			Message{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, Call: c}}, StopReason: StopToolUse},
			ToolResultText(c, fmt.Sprintf("File %d. MARKER-%d.\n%s", i, i, body), false))
	}
	return msgs
}

// BenchmarkHeal heals the history a request of turn N of a read loop carries (nothing to
// heal: the common case).
func BenchmarkHeal(b *testing.B) {
	for _, turns := range []int{50, 500} {
		msgs := loopHistory(turns)
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := Heal(msgs); len(got) != len(msgs) {
					b.Fatal(len(got))
				}
			}
		})
	}
}

// BenchmarkHealGrown heals the same history as BenchmarkHeal from the mark of the previous
// turn's history (a request of the same lineage): only the turn's two messages are read.
func BenchmarkHealGrown(b *testing.B) {
	for _, turns := range []int{50, 500} {
		msgs := loopHistory(turns)
		_, mark := HealGrown(msgs[:len(msgs)-2], HealMark{})
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, next := HealGrown(msgs, mark); len(got) != len(msgs) || next.Len() != len(msgs) {
					b.Fatal(len(got), next.Len())
				}
			}
		})
	}
}
