package cli_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestUIResizeWhileStreaming resizes the tmux window twice while an answer streams (80×24
// to 60×18, then to 100×30) and checks the screen once the answer is complete: nothing
// left over from the old sizes, the answer's words all there, in order, wrapped at the new
// width, and the editor, the key hint and the status line on the last rows.
func TestUIResizeWhileStreaming(t *testing.T) {
	const n = 240
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i+1)
	}
	scenario := "version: 1\ndialogs:\n  - match: stream\n    turns:\n      - delay: 10ms\n        text: " + strings.Join(words, " ") + "\n"
	x, _, _ := startUI(t, scenario, "{}", 80, 24)
	x.waitFor("Type a message")
	x.run("send-keys", "-t", "ui", "-l", "stream please")
	x.run("send-keys", "-t", "ui", "Enter")
	x.waitFor(" w40 ")
	x.run("resize-window", "-t", "ui", "-x", "60", "-y", "18")
	if s := x.waitFor(" w120 "); !strings.Contains(s, "working…") {
		t.Fatalf("the answer ended before the second resize (the scenario's delay is too short):\n%s", s)
	}
	x.run("resize-window", "-t", "ui", "-x", "100", "-y", "30")
	s := x.waitFor("Enter send")
	if !strings.Contains(s, "w240") {
		t.Fatalf("the answer ended without its last word:\n%s", s)
	}
	checkAnswerScreen(t, s, 100, 30, n)

	x.run("resize-window", "-t", "ui", "-x", "80", "-y", "24")
	s = x.waitFor(" script/script · ctx")
	for deadline := 0; deadline < 100 && len(strings.Split(strings.TrimRight(s, "\n"), "\n")) != 24; deadline++ {
		s = x.screen() // the pane shrinks first, the new frame follows
	}
	checkAnswerScreen(t, s, 80, 24, n)
}

var answerRow = regexp.MustCompile(`^  (w\d+)( w\d+)*$`)

// checkAnswerScreen checks a screen of width×height whose conversation ends with the
// complete answer "w1 … wN": every row is blank, the prompt, a row of the answer or one of
// the three bottom rows; the answer's rows hold consecutive words ending in wN, each row but
// the last filled to the width (markdown wraps at width-4: a stale row of an old, narrower
// width would be short).
func checkAnswerScreen(t *testing.T, screen string, width, height, n int) {
	t.Helper()
	rows := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(rows) != height {
		t.Fatalf("the screen has %d rows, want %d:\n%s", len(rows), height, screen)
	}
	bottom := rows[height-3:]
	if !strings.HasPrefix(bottom[0], "> Type a message") || !strings.HasPrefix(bottom[1], "Enter send") || !strings.HasPrefix(bottom[2], " script/script · ctx") {
		t.Errorf("the last rows are not the editor, the hint and the status line:\n%s", screen)
	}
	next, last := 0, -1
	for i, r := range rows[:height-3] {
		if w := utf8.RuneCountInString(r); w > width {
			t.Errorf("row %d is %d cells wide, wider than %d: %q", i, w, width, r)
		}
		switch {
		case r == "" || r == "› stream please":
			continue
		case !answerRow.MatchString(r):
			t.Errorf("row %d is neither blank, the prompt nor the answer: %q\n%s", i, r, screen)
			continue
		}
		if last >= 0 && i != last+1 {
			t.Errorf("the answer's rows are not together (row %d after %d):\n%s", i, last, screen)
		}
		if last >= 0 && utf8.RuneCountInString(rows[last]) < width-4-6 {
			t.Errorf("row %d is not wrapped at the width %d: %q", last, width, rows[last])
		}
		last = i
		for _, w := range strings.Fields(r) {
			k, _ := strconv.Atoi(w[1:])
			if next != 0 && k != next {
				t.Fatalf("the answer shows w%d where w%d belongs:\n%s", k, next, screen)
			}
			next = k + 1
		}
	}
	if next != n+1 {
		t.Errorf("the answer does not end with w%d:\n%s", n, screen)
	}
}
