package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/cli"
)

// tmux drives a terminal session on a server of the test's own.
type tmux struct {
	t    *testing.T
	sock string
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", x.sock}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (x *tmux) screen() string { return x.run("capture-pane", "-p", "-t", "ui") }

// waitFor waits until the screen shows text and returns the screen.
func (x *tmux) waitFor(text string) string {
	x.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		if s = x.screen(); strings.Contains(s, text) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	x.t.Fatalf("the screen does not show %q:\n%s", text, s)
	return ""
}

// startUI starts `rein --script s.yaml` in a tmux pane of width×height of a server of the
// test's own, in a workspace holding s.yaml (scenario) and a $REIN_HOME holding
// settings.json, with $EDITOR an editor that sets the terminal's modes and reads a line from
// it, as a real one does (in a background process group it would be stopped at once). The
// shell prints EXIT=<status> when rein ends. It skips without tmux (fails in CI).
func startUI(t *testing.T, scenario, settings string, width, height int) (x *tmux, ws, home string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is missing in CI: .ci/run installs it")
		}
		t.Skip("tmux is not installed: the terminal UI end-to-end test needs it (apt-get install tmux)")
	}
	rein, err := exec.LookPath("rein") // this test binary, installed on PATH by TestMain
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ws, home = filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	editor := "#!/bin/sh\nstty -echo\nprintf 'EDITING> '\nread line\nstty echo\nprintf '%s\\n' \"$line\" > \"$1\"\n"
	files := map[string]string{filepath.Join(ws, "s.yaml"): scenario, filepath.Join(home, "settings.json"): settings,
		filepath.Join(dir, "editor"): editor}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	x = &tmux{t: t, sock: filepath.Join(dir, "tmux.sock")}
	shell := fmt.Sprintf("cd %q && env REIN_HOME=%q ANTHROPIC_API_KEY= OPENAI_API_KEY= VISUAL= EDITOR=%q TERM=xterm-256color %q --script s.yaml; echo EXIT=$?; sleep 60",
		ws, home, filepath.Join(dir, "editor"), rein)
	x.run("-f", "/dev/null", "new-session", "-d", "-s", "ui", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), shell)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", x.sock, "kill-server").Run() })
	return x, ws, home
}

// TestUIInTmux runs `rein` with no arguments in a real terminal (tmux) on the script model:
// the first prompt is written in the external editor (Ctrl+G, an editor that reads the
// terminal, so it must be handed the terminal's foreground), it streams text and runs a bash
// call, a write an ask rule holds is approved, /model switches the model, a steer queued
// while a slow bash call runs is delivered after it, the next slow call is aborted with Esc,
// Ctrl+C twice quits with the terminal restored — then the session verifies and its records
// hold what the screen showed, in order.
func TestUIInTmux(t *testing.T) {
	scenario := `version: 1
dialogs:
  - match: take notes
    turns:
      - text: Checking the workspace first.
        calls: [{name: bash, id: b1, args: {command: "echo marker-$((6*7))"}}]
      - text: Writing the notes now.
        calls: [{name: write, id: w1, args: {path: notes.txt, content: "alpha\nbeta\n"}}]
      - text: Wrote notes.txt for you.
  - match: use tabs
    turns:
      - text: Tabs it is; one more slow step.
        calls: [{name: bash, id: b3, args: {command: "sleep 30"}}]
      - text: never
  - match: format
    turns:
      - calls: [{name: bash, id: b2, args: {command: "until [ -f gate ]; do sleep 0.05; done; echo formatted"}}]
      - text: never
`
	// 80×24: the conversation scrolls while answers stream.
	x, ws, home := startUI(t, scenario, `{"permissions": {"ask": ["write(*)"]}}`, 80, 24)
	x.waitFor("Type a message")
	x.run("send-keys", "-t", "ui", "C-g")
	x.waitFor("EDITING>")
	x.run("send-keys", "-t", "ui", "-l", "take notes")
	x.run("send-keys", "-t", "ui", "Enter")
	x.waitFor("> take notes")
	x.run("send-keys", "-t", "ui", "Enter")
	s := x.waitFor("wants to run")
	for _, want := range []string{"› take notes", "Checking the workspace first.", "⏺ bash echo marker-$((6*7))", "marker-42", "+alpha", "allow once"} {
		if !strings.Contains(s, want) {
			t.Errorf("the approval screen lacks %q:\n%s", want, s)
		}
	}
	x.run("send-keys", "-t", "ui", "y")
	s = x.waitFor("Wrote notes.txt for you.")
	if !strings.Contains(s, "⏺ write notes.txt") {
		t.Errorf("the approved write is not shown as done:\n%s", s)
	}

	x.run("send-keys", "-t", "ui", "-l", "/model script/other-model")
	x.run("send-keys", "-t", "ui", "Enter")
	x.waitFor("model: script/other-model")
	x.waitFor("script/other-model · ctx")

	x.run("send-keys", "-t", "ui", "-l", "format the code")
	x.run("send-keys", "-t", "ui", "Enter")
	x.waitFor("until [ -f gate ]")
	x.run("send-keys", "-t", "ui", "-l", "use tabs")
	x.run("send-keys", "-t", "ui", "Enter")
	x.waitFor("queued steer: use tabs")
	x.waitFor("queue 1")
	if err := os.WriteFile(filepath.Join(ws, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s = x.waitFor("Tabs it is; one more slow step.")
	if strings.Contains(s, "queued steer") || strings.Contains(s, "queue 1") {
		t.Errorf("the steer is still shown as queued after it was delivered:\n%s", s)
	}
	x.waitFor("sleep 30")
	x.run("send-keys", "-t", "ui", "Escape")
	x.waitFor("run aborted")
	x.run("send-keys", "-t", "ui", "C-c")
	x.waitFor("press Ctrl+C again")
	x.run("send-keys", "-t", "ui", "C-c")
	s = x.waitFor("EXIT=")
	if !strings.Contains(s, "EXIT=0") {
		t.Errorf("rein did not exit 0:\n%s", s)
	}

	if data, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(data) != "alpha\nbeta\n" {
		t.Errorf("notes.txt = %q, %v", data, err)
	}
	ledgers, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("found %d session ledgers, want 1", len(ledgers))
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"session", "verify", filepath.Dir(ledgers[0])}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("rein session verify: exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(ledgers[0])
	if err != nil {
		t.Fatal(err)
	}
	ledger := string(data)
	// What the screen showed is what the session recorded, in order: the approved write's
	// result, the model switch (a fact), the steer as a user entry after the tool batch it
	// waited for, the cancel record before the run's end.
	at := 0
	for _, want := range []string{"take notes", "Checking the workspace first.", "marker-42", "Writing the notes now.", `"toolCallId":"w1"`, "Wrote notes.txt for you.",
		`"key":"model","value":"other-model"`, "format the code", `"text":"formatted"`, `"role":"user","content":[{"type":"text","text":"use tabs"}]`,
		"Tabs it is; one more slow step.", `"kind":"cancel"`, `"status":"aborted"`} {
		i := strings.Index(ledger[at:], want)
		if i < 0 {
			t.Fatalf("the ledger lacks %q after position %d", want, at)
		}
		at += i
	}
}
