package tui

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/system"
)

// rulesHost is a scriptHost that writes "always allow" rules to its real settings files.
type rulesHost struct{ *scriptHost }

func (h rulesHost) settingsPath(project bool) string {
	if project {
		return filepath.Join(h.dir, ".rein", system.SettingsFile)
	}
	return filepath.Join(h.home, system.SettingsFile)
}

func (h rulesHost) AllowRule(a Approval) string { return policy.AllowRuleFor(a.Tool, a.Part) }

func (h rulesHost) AllowAlways(rule string, project bool) (string, error) {
	path := h.settingsPath(project)
	return path, system.AddAllowRule(path, rule, !project)
}

func (h rulesHost) AlwaysAllowed(rule string, trusted bool) bool {
	for _, project := range []bool{false, true} {
		if project && !trusted {
			continue
		}
		s, err := system.ReadSettings(h.settingsPath(project), !project)
		if err == nil && slices.Contains(s.Permissions.Allow, rule) {
			return true
		}
	}
	return false
}

// TestAlwaysAllow: "a" then "u" writes write(notes.txt) to the user's settings file (its
// ask rule kept), lets this call and the next one run, and a later UI session on the same
// settings runs the same write without asking.
func TestAlwaysAllow(t *testing.T) {
	scenario := `version: 1
turns:
  - calls: [{name: write, id: w1, args: {path: notes.txt, content: "a\n"}}]
  - calls: [{name: write, id: w2, args: {path: notes.txt, content: "b\n"}}]
  - text: Written twice.
`
	h := rulesHost{newScriptHost(t, scenario, askWrites)}
	m, tm := startOn(t, h)
	send(tm, "write")
	waitFor(t, tm, "[a] always")
	tm.Type("a")
	waitFor(t, tm, "always allow write(notes.txt) — write it to:", "[u] user settings")
	if strings.Contains(tm.screen(), "[p] project") {
		t.Error("an untrusted project's settings are offered, though they are not read")
	}
	tm.Type("u")
	waitFor(t, tm, "Written twice.", "always allowed: write(notes.txt)")
	for _, id := range []string{"w1", "w2"} {
		if r := toolResult(t, m, id); r.IsError {
			t.Errorf("%s: %s", id, r.Text())
		}
	}
	s, err := system.ReadSettings(h.settingsPath(false), true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Permissions.Allow, []string{"write(notes.txt)"}) || !slices.Equal(s.Permissions.Ask, []string{"write(*)"}) {
		t.Errorf("settings permissions = %+v", s.Permissions)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(h.script, []byte(`version: 1
turns:
  - calls: [{name: write, id: w3, args: {path: notes.txt, content: "c\n"}}]
  - text: Written again.
`), 0o644); err != nil {
		t.Fatal(err)
	}
	m2, tm2 := startOn(t, h)
	send(tm2, "write again")
	waitFor(t, tm2, "Written again.")
	if r := toolResult(t, m2, "w3"); r.IsError {
		t.Errorf("w3: %s", r.Text())
	}
	if data, _ := os.ReadFile(filepath.Join(h.dir, "notes.txt")); string(data) != "c\n" {
		t.Errorf("notes.txt = %q", data)
	}
}

// startOn opens the UI on any host at 80×24 without colour, as a teatest program.
func startOn(t *testing.T, h Host) (*Model, *probe) {
	t.Helper()
	m, err := New(context.Background(), h, Options{Width: 80, Height: 24})
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
