package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUIAttachesMentionsInTmux: a prompt sent in the UI with @path mentions carries the
// file's text to the model and into the session's record of the prompt; the screen shows
// the prompt as typed with one line per attachment, and a refused mention's notice.
func TestUIAttachesMentionsInTmux(t *testing.T) {
	x, ws, home := startUI(t, "version: 1\ndialogs:\n  - match: summarize\n    turns:\n      - text: Summarized.\n", `{"permissions": {"deny": ["read(secret.txt)"]}}`, 80, 24)
	for name, body := range map[string]string{"notes.md": "alpha-line\nbeta-line\n", "secret.txt": "hunter2\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x.waitFor("Type a message")
	x.run("send-keys", "-t", "ui", "-l", "summarize @notes.md and @secret.txt ")
	x.run("send-keys", "-t", "ui", "Enter")
	s := x.waitFor("Summarized.")
	for _, want := range []string{"› summarize @notes.md and @secret.txt", "attached @notes.md (2 lines, 20B)", "@secret.txt not attached: "} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "alpha-line") || strings.Contains(s, "hunter2") {
		t.Errorf("the screen shows an attachment's text:\n%s", s)
	}
	ledgers, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("found %d session ledgers, want 1", len(ledgers))
	}
	data, err := os.ReadFile(ledgers[0])
	if err != nil {
		t.Fatal(err)
	}
	if l := string(data); !strings.Contains(l, `attachment path=\"notes.md\" kind=\"file\"`) || !strings.Contains(l, `alpha-line\nbeta-line`) || strings.Contains(l, "hunter2") {
		t.Errorf("the session does not record the attachment as sent:\n%s", l)
	}
}
