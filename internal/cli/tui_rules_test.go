package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUIAlwaysAllow: "always allow" writes to the user's or the trusted project's real
// settings file; /permissions lists the rule with its file, and the project's rule counts
// only while the project is trusted.
func TestUIAlwaysAllow(t *testing.T) {
	dir := t.TempDir()
	h := &uiHost{home: filepath.Join(dir, "home"), dir: filepath.Join(dir, "ws")}
	if err := os.MkdirAll(filepath.Join(h.dir, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, ".rein", "settings.json"), []byte(`{"permissions": {"ask": ["bash(go *)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	user, err := h.AllowAlways("bash(go vet ./...)", false)
	if err != nil || user != filepath.Join(h.home, "settings.json") {
		t.Fatalf("user: %s, %v", user, err)
	}
	project, err := h.AllowAlways("bash(go test ./...)", true)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := h.Permissions(true)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"allow bash(go vet ./...)  (" + user + ")", "allow bash(go test ./...)  (" + project + ")", "ask   bash(go *)  (" + project + ")"} {
		if !strings.Contains(all, want) {
			t.Errorf("/permissions lacks %q:\n%s", want, all)
		}
	}
	if !h.AlwaysAllowed("bash(go vet ./...)", false) || !h.AlwaysAllowed("bash(go test ./...)", true) {
		t.Error("a written rule is not in force")
	}
	if h.AlwaysAllowed("bash(go test ./...)", false) {
		t.Error("an untrusted project's rule counts")
	}
}
