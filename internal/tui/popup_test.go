package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestPopupChooses: Down and Up move the choice through the "@" popup (wrapping), Enter
// after a move completes the chosen file instead of sending; in the "/" popup Down then
// Tab completes the second command.
func TestPopupChooses(t *testing.T) {
	h := kernelWorkspace(t, "version: 1\nturns:\n  - text: ok\n")
	_, tm := startOn(t, h)
	tm.Type("explain @kern")
	waitFor(t, tm, "› @notes/kernel.md", "  @internal/kernel/loop.go")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	waitFor(t, tm, "  @notes/kernel.md", "› @internal/kernel/loop.go", "Tab or Enter completes")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown}) // wraps to the first
	waitFor(t, tm, "› @notes/kernel.md")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp}) // wraps to the last
	waitFor(t, tm, "› @internal/kernel/loop.go")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "> explain @internal/kernel/loop.go")
	if f := tm.screen(); strings.Contains(f, "› explain") {
		t.Errorf("Enter after a choice sent the prompt:\n%s", f)
	}
	tm.Send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}) // clears the editor
	tm.Type("/se")
	waitFor(t, tm, "› /session", "  /resume")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	waitFor(t, tm, "> /resume")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
}

// TestPopupEscCloses: Esc while the popup shows closes it and aborts nothing: the run in
// progress goes on, the editor keeps its text, and typing opens the popup again; the next
// Esc (no popup) aborts.
func TestPopupEscCloses(t *testing.T) {
	scenario := `version: 1
turns:
  - calls: [{name: bash, id: b1, args: {command: "while [ ! -f go ]; do sleep 0.02; done; echo went"}}]
  - text: done now
`
	h := kernelWorkspace(t, scenario)
	m, tm := startOn(t, h)
	send(tm, "wait")
	waitFor(t, tm, "while [ ! -f go ]")
	tm.Type("see @kern")
	waitFor(t, tm, "› @notes/kernel.md")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitFor(t, tm, "> see @kern", "working…")
	if f := tm.screen(); strings.Contains(f, "@notes/kernel.md") || strings.Contains(f, "run aborted") {
		t.Errorf("Esc did not just close the popup:\n%s", f)
	}
	tm.Type("e")
	waitFor(t, tm, "› @notes/kernel.md")
	if err := os.WriteFile(filepath.Join(h.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "done now")
	waitIdle(t, m)
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	if r := toolResult(t, m, "b1"); !strings.Contains(r.Text(), "went") {
		t.Errorf("the tool was stopped: %q", r.Text())
	}
}
