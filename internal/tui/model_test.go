package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/llm"
)

const conversation = `version: 1
pricing: {input: 3, output: 15}
turns:
  - thinking: The user wants notes. I will look around first.
    text: Let me **check** the workspace.
    calls:
      - {name: bash, id: b1, args: {command: "printf 'one\ntwo\n'"}}
    usage: {input: 1200, output: 40}
  - text: "## Done\n\nThe workspace has:\n\n- one\n- two\n"
    usage: {input: 1400, output: 60}
`

// TestConversationFrame streams an answer with thinking and a bash call: the screen shows
// the prompt, the folded thinking, the call with its output, the answer as markdown and the
// status line.
func TestConversationFrame(t *testing.T) {
	h := newScriptHost(t, conversation, "")
	m, tm := start(t, h)
	send(tm, "what is here?")
	waitFor(t, tm, "The workspace has")
	waitIdle(t, m)
	finalFrame(t, m, tm)
}

// TestThinkingToggle: Ctrl+T unfolds the thinking.
func TestThinkingToggle(t *testing.T) {
	h := newScriptHost(t, conversation, "")
	m, tm := start(t, h)
	send(tm, "what is here?")
	waitFor(t, tm, "The workspace has")
	tm.Send(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	waitFor(t, tm, "I will look around first")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t)
	if f := frame(m); !strings.Contains(f, "│ The user wants notes") {
		t.Errorf("the thinking is not shown unfolded:\n%s", f)
	}
}

const approval = `version: 1
turns:
  - text: I'll write the notes.
    calls:
      - {name: write, id: w1, args: {path: notes.txt, content: "alpha\nbeta\n"}}
  - text: Understood.
`

const askWrites = `{"permissions": {"ask": ["write(*)"]}}`

// TestApprovalFrame: a write an ask rule holds shows the call as a diff and the choices.
func TestApprovalFrame(t *testing.T) {
	h := newScriptHost(t, approval, askWrites)
	m, tm := startOn(t, rulesHost{h})
	send(tm, "take notes")
	waitFor(t, tm, "allow once")
	finalFrame(t, m, tm)
	if _, err := os.Stat(filepath.Join(h.dir, "notes.txt")); err == nil {
		t.Error("the write ran although nobody allowed it")
	}
}

// TestDenyWithReason: the user's reason for a denial reaches the model as the call's result.
func TestDenyWithReason(t *testing.T) {
	h := newScriptHost(t, approval, askWrites)
	m, tm := start(t, h)
	send(tm, "take notes")
	waitFor(t, tm, "allow once")
	tm.Type("n")
	waitFor(t, tm, "Why not?")
	send(tm, "not in this repo")
	waitFor(t, tm, "Understood.")
	result := toolResult(t, m, "w1")
	if !result.IsError || !strings.Contains(result.Text(), "not in this repo") {
		t.Errorf("the write's result does not carry the reason: %+v", result)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "notes.txt")); err == nil {
		t.Error("the denied write ran")
	}
}

// TestAllowForSession: "s" lets the call run and the same call again without asking.
func TestAllowForSession(t *testing.T) {
	scenario := `version: 1
turns:
  - calls: [{name: write, id: w1, args: {path: notes.txt, content: "a\n"}}]
  - calls: [{name: write, id: w2, args: {path: notes.txt, content: "b\n"}}]
  - text: Written twice.
`
	h := newScriptHost(t, scenario, askWrites)
	m, tm := start(t, h)
	send(tm, "write")
	waitFor(t, tm, "allow once")
	tm.Type("s")
	waitFor(t, tm, "Written twice.")
	for _, id := range []string{"w1", "w2"} {
		if r := toolResult(t, m, id); r.IsError {
			t.Errorf("%s: %s", id, r.Text())
		}
	}
	data, err := os.ReadFile(filepath.Join(h.dir, "notes.txt"))
	if err != nil || string(data) != "b\n" {
		t.Errorf("notes.txt = %q, %v; want the second write's content", data, err)
	}
}

// TestSteerWhileAToolRuns queues a message while bash runs: it is shown as queued, counted
// on the status line, and delivered after the tool batch, before the next model call.
func TestSteerWhileAToolRuns(t *testing.T) {
	scenario := `version: 1
dialogs:
  - match: use tabs
    turns: [{text: Tabs it is.}]
  - turns:
      - calls: [{name: bash, id: b1, args: {command: "while [ ! -f go ]; do sleep 0.02; done; echo went"}}]
      - text: never reached
`
	h := newScriptHost(t, scenario, "")
	m, tm := start(t, h)
	send(tm, "format the code")
	waitFor(t, tm, "while [ ! -f go ]")
	send(tm, "use tabs")
	waitFor(t, tm, "queued steer: use tabs", "queue 1")
	if err := os.WriteFile(filepath.Join(h.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "Tabs it is.")
	msgs := m.e.runtime().Context()
	var roles []string
	for _, msg := range msgs {
		roles = append(roles, string(msg.Role)+":"+msg.Text())
	}
	got := strings.Join(roles, " | ")
	if !strings.Contains(got, "tool:went | user:use tabs | assistant:Tabs it is.") {
		t.Errorf("the steer was not delivered after the tool batch: %s", got)
	}
}

// TestEscAborts: Esc stops a running tool; the cancel record comes first and the run ends
// aborted.
func TestEscAborts(t *testing.T) {
	scenario := `version: 1
turns:
  - calls: [{name: bash, id: b1, args: {command: "sleep 30"}}]
  - text: never
`
	h := newScriptHost(t, scenario, "")
	m, tm := start(t, h)
	send(tm, "wait")
	waitFor(t, tm, "sleep 30")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitFor(t, tm, "run aborted")
	data, err := os.ReadFile(filepath.Join(m.current().SessionDir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	cancelAt, resultAt := strings.Index(text, `"kind":"cancel"`), strings.Index(text, `"toolCallId":"b1"`)
	if cancelAt < 0 || resultAt >= 0 && cancelAt > resultAt {
		t.Errorf("the cancel record (at %d) must come before the tool's result (at %d)", cancelAt, resultAt)
	}
}

// TestSlashCommands: /help lists the commands, /cost and /session answer, an unknown one
// is named.
func TestSlashCommands(t *testing.T) {
	h := newScriptHost(t, conversation, "")
	m, tm := start(t, h)
	send(tm, "/help")
	waitFor(t, tm, "/compact")
	send(tm, "/session")
	waitFor(t, tm, "ledger head")
	send(tm, "/nope")
	waitFor(t, tm, "unknown command /nope")
	send(tm, "/quit")
	tm.WaitFinished(t)
	_ = m
}

// TestModelSwitchIsRecorded: /model reopens the session with another model and records it.
func TestModelSwitchIsRecorded(t *testing.T) {
	h := newScriptHost(t, conversation, "")
	m, tm := start(t, h)
	send(tm, "/model script/other-model")
	waitFor(t, tm, "model: script/other-model")
	send(tm, "/quit")
	tm.WaitFinished(t)
	if got := m.current().Model; got != "other-model" {
		t.Errorf("the model is %q after /model", got)
	}
	data, err := os.ReadFile(filepath.Join(m.current().SessionDir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "other-model") {
		t.Error("the ledger does not record the model switch")
	}
}

// toolResult finds the result of call id in the conversation.
func toolResult(t *testing.T, m *Model, id string) llm.Message {
	t.Helper()
	for _, msg := range m.e.runtime().Context() {
		if msg.Role == llm.RoleTool && msg.ToolCallID == id {
			return msg
		}
	}
	t.Fatalf("no result for call %s", id)
	return llm.Message{}
}
