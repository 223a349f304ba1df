package tui

import (
	"fmt"
	"strings"
	"testing"
)

// numbered is n words "w1 w2 …", one streamed delta each.
func numbered(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("w%d", i+1)
	}
	return strings.Join(ws, " ")
}

// TestEventsStayInOrderAfterReopen: a reopen (/model, /new) or a /compact ends in a message
// of its own, and the UI must still read the agent's messages one at a time. Reading them
// with two waiters at once delivers deltas out of order — a streamed answer showed its
// words swapped after /model (seen in tmux as a rendering bug).
func TestEventsStayInOrderAfterReopen(t *testing.T) {
	answer := numbered(400)
	scenario := "version: 1\ndialogs:\n  - match: count\n    turns:\n      - text: " + answer + "\n"
	h := newScriptHost(t, scenario, "")
	m, tm := start(t, h)
	send(tm, "/model script/other-model")
	waitFor(t, tm, "model: script/other-model")
	send(tm, "/new")
	waitFor(t, tm, "new session")
	send(tm, "count")
	waitFor(t, tm, "w400")
	waitIdle(t, m)
	send(tm, "/quit")
	tm.WaitFinished(t)
	for _, b := range m.t.blocks {
		if tb, ok := b.(*textBlock); ok {
			if got := tb.s.text(); got != answer {
				t.Fatalf("the streamed answer is out of order:\n%s", got)
			}
			return
		}
	}
	t.Fatal("no answer in the transcript")
}
