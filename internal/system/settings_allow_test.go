package system

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddAllowRule: the rule joins permissions.allow of a real settings file; the file's
// other keys (hooks, the ask list, an unknown-to-this-code key) survive in their order, its
// mode is kept, and the result loads as settings. Adding it again changes nothing; a file
// that is not an object is refused and left alone.
func TestAddAllowRule(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".rein", SettingsFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "rein-stop"}]}]},
 "permissions": {"ask": ["write(*)"], "allow": ["bash(ls)"]}, "sandbox": false}`
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := AddAllowRule(path, "write(notes.txt)", false); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSettings(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Permissions.Allow, ","); got != "bash(ls),write(notes.txt)" {
		t.Errorf("allow = %s", got)
	}
	if len(s.Permissions.Ask) != 1 || len(s.Hooks["Stop"]) != 1 {
		t.Errorf("ask or hooks lost: %+v", s)
	}
	data, _ := os.ReadFile(path)
	if h, p := strings.Index(string(data), `"hooks"`), strings.Index(string(data), `"permissions"`); h < 0 || p < h || !strings.Contains(string(data), `"sandbox": false`) {
		t.Errorf("order or keys changed:\n%s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := AddAllowRule(path, "write(notes.txt)", false); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Errorf("adding the rule twice changed the file:\n%s", again)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}

	fresh := filepath.Join(dir, "home", SettingsFile)
	if err := AddAllowRule(fresh, "bash(go test ./...)", true); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSettings(fresh, true); err != nil || len(s.Permissions.Allow) != 1 {
		t.Errorf("new file: %+v, %v", s.Permissions, err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", fi.Mode())
	}

	if err := os.WriteFile(path, []byte(`["not", "an object"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AddAllowRule(path, "edit", false); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("a list was accepted: %v", err)
	}
	if err := AddAllowRule(fresh, "bash(", true); err == nil {
		t.Error("a bad rule was written")
	}
}
