package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/reinhq/rein/internal/llm"
)

// startWith opens the UI on h with o at 80×24 without colour, as a teatest program.
func startWith(t *testing.T, h Host, o Options) (*Model, *probe) {
	t.Helper()
	o.Width, o.Height = 80, 24
	m, err := New(context.Background(), h, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	})
	return m, startProgram(t, m)
}

// lastUser is the text of the last user message of the conversation.
func lastUser(m *Model) string {
	msgs := m.e.runtime().Context()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Text()
		}
	}
	return ""
}

// TestPastePlaceholder: a long paste shows as a placeholder; the message sent — and the
// session's record of it — carries the whole text, line ends as "\n".
func TestPastePlaceholder(t *testing.T) {
	h := newScriptHost(t, "version: 1\nturns:\n  - text: Got it.\n", "")
	m, tm := start(t, h)
	var lines []string
	for i := range 42 {
		lines = append(lines, fmt.Sprintf("line %02d of the log", i+1))
	}
	pasted := strings.Join(lines, "\r\n")
	tm.Type("look at ")
	tm.Send(tea.PasteMsg{Content: pasted})
	tm.Type(" please")
	waitFor(t, tm, "look at [pasted 42 lines, 797 B #1] please")
	golden.RequireEqual(t, tm.screen())
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "Got it.")
	want := "look at " + strings.Join(lines, "\n") + " please"
	if got := lastUser(m); got != want {
		t.Errorf("the message sent is %q, want the whole paste in place", got)
	}
	data, err := os.ReadFile(filepath.Join(m.current().SessionDir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `line 42 of the log please`) || strings.Contains(string(data), "[pasted") {
		t.Error("the session does not record the whole paste in place of its placeholder")
	}
}

// TestPasteDeletedWithItsPlaceholder: Backspace after a placeholder deletes it whole, and
// the paste is not sent; a short paste is inserted as typed.
func TestPasteDeletedWithItsPlaceholder(t *testing.T) {
	h := newScriptHost(t, "version: 1\nturns:\n  - text: Got it.\n", "")
	m, tm := start(t, h)
	tm.Type("keep ")
	tm.Send(tea.PasteMsg{Content: strings.Repeat("x", 1001)})
	waitFor(t, tm, "keep [pasted 1 lines, 1001 B #1]")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	tm.Send(tea.PasteMsg{Content: "short\npaste"})
	waitFor(t, tm, "keep short")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "Got it.")
	if got := lastUser(m); got != "keep short\npaste" {
		t.Errorf("the message sent is %q", got)
	}
}

// TestSlashCompletion: "/" lists the commands and the loaded skills with their help, a
// prefix first; Tab completes the best, and Enter on a prefix of a command that takes no
// arguments runs it.
func TestSlashCompletion(t *testing.T) {
	h := &libraryHost{scriptHost: newScriptHost(t, conversation, "")}
	_, tm := startLibrary(t, h)
	tm.Type("/")
	waitFor(t, tm, "more (↑/↓ or type to narrow)")
	tm.Type("s")
	waitFor(t, tm, "/skill:notes [MESSAGE]", "/session — the session's id")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	tm.Type("mdl")
	waitFor(t, tm, "/model [PROVIDER/]MODEL — switch the model")
	golden.RequireEqual(t, tm.screen())
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	waitFor(t, tm, "> /model", "Enter send · Ctrl+J") // the popup has closed
	for range len("/model ") {
		tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	tm.Type("/cos")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "session cost: $")
}

// editorScript writes an executable editor that runs body with the file as $1.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "editor")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExternalEditor: Ctrl+G runs $VISUAL (before $EDITOR) on a file holding the input,
// pastes unfolded; what it leaves replaces the input. An editor that fails leaves the
// input as it was.
func TestExternalEditor(t *testing.T) {
	h := newScriptHost(t, "version: 1\nturns:\n  - text: ok\n", "")
	seen := filepath.Join(t.TempDir(), "seen")
	visual := editorScript(t, fmt.Sprintf(`cp "$1" %q && printf 'rewritten by the editor\n' > "$1"`, seen))
	env := map[string]string{"VISUAL": visual, "EDITOR": "/nonexistent"}
	m, tm := startWith(t, h, Options{Getenv: func(k string) string { return env[k] }})
	tm.Type("draft ")
	tm.Send(tea.PasteMsg{Content: strings.Repeat("p\n", 6)})
	waitFor(t, tm, "draft [pasted 6 lines")
	tm.Send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	waitFor(t, tm, "> rewritten by the editor")
	if data, err := os.ReadFile(seen); err != nil || string(data) != "draft "+strings.Repeat("p\n", 6) {
		t.Errorf("the editor was given %q, %v", data, err)
	}

	env["VISUAL"] = editorScript(t, `printf 'lost\n' > "$1"; exit 3`)
	tm.Send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	waitFor(t, tm, "exit status 3", "input is kept as it was")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	if got := m.input.Value(); got != "rewritten by the editor" {
		t.Errorf("after a failed editor the input is %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "rein-message-*.md")); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

func TestEditorCommand(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"VISUAL": "code --wait", "EDITOR": "nano"}, "code --wait"},
		{map[string]string{"VISUAL": " ", "EDITOR": "nano"}, "nano"},
		{nil, "vi"},
	} {
		if got := strings.Join(editorCommand(func(k string) string { return c.env[k] }), " "); got != c.want {
			t.Errorf("editorCommand(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}

// TestEditQueue: while a tool runs, Alt+Up takes the message queued last back into the
// editor (the queue and its count shrink); edited and queued again with Enter, it is
// delivered after the tool batch with the other steer, in the order queued.
func TestEditQueue(t *testing.T) {
	scenario := `version: 1
dialogs:
  - match: use spaces
    turns: [{text: Spaces it is.}]
  - turns:
      - calls: [{name: bash, id: b1, args: {command: "while [ ! -f go ]; do sleep 0.02; done; echo went"}}]
      - text: never reached
`
	h := newScriptHost(t, scenario, "")
	m, tm := start(t, h)
	send(tm, "format the code")
	waitFor(t, tm, "while [ ! -f go ]")
	send(tm, "keep the header")
	send(tm, "use tabs")
	waitFor(t, tm, "queued steer: use tabs", "queue 2")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp, Mod: tea.ModAlt})
	waitFor(t, tm, "> use tabs", "queue 1")
	f := tm.screen()
	if strings.Contains(f, "queued steer: use tabs") {
		t.Errorf("the message taken back is still queued:\n%s", f)
	}
	golden.RequireEqual(t, f)
	for range len("tabs") {
		tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	send(tm, "spaces")
	waitFor(t, tm, "queued steer: use spaces", "queue 2")
	if err := os.WriteFile(filepath.Join(h.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "Spaces it is.")
	var roles []string
	for _, msg := range m.e.runtime().Context() {
		roles = append(roles, string(msg.Role)+":"+msg.Text())
	}
	got := strings.Join(roles, " | ")
	if !strings.Contains(got, "tool:went | user:keep the header | user:use spaces | assistant:Spaces it is.") || strings.Contains(got, "use tabs") {
		t.Errorf("the queue as edited was not delivered after the tool batch: %s", got)
	}
}

// TestUnqueueLast takes back the last queued message across both queues, after the agent
// drained one of them.
func TestUnqueueLast(t *testing.T) {
	e := newEngine(nil)
	e.enqueue(llm.UserText("s1"), false)
	e.enqueue(llm.UserText("f1"), true)
	e.enqueue(llm.UserText("s2"), false)
	if text, ok, q := e.unqueueLast(); !ok || text != "s2" || q != (queueMsg{1, 1}) {
		t.Fatalf("unqueueLast = %q %v %+v", text, ok, q)
	}
	e.Steering() // the agent takes s1
	if text, ok, q := e.unqueueLast(); !ok || text != "f1" || q != (queueMsg{0, 0}) {
		t.Fatalf("unqueueLast = %q %v %+v", text, ok, q)
	}
	if _, ok, _ := e.unqueueLast(); ok {
		t.Fatal("unqueueLast took something from an empty queue")
	}
}
