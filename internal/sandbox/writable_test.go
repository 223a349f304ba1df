package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWritable: an additional writable directory is bound read-write — commands create and
// change files in it — while the protected paths hold inside it as in the workspace (its
// .git cannot be changed), and a sibling stays invisible.
func TestWritable(t *testing.T) {
	outside := t.TempDir()
	extra := filepath.Join(outside, "shared")
	if err := os.MkdirAll(filepath.Join(extra, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{filepath.Join(extra, ".git", "config"): "[core]\n", filepath.Join(outside, "sibling.txt"): "s\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newSandbox(t, Config{Writable: []string{extra}})
	if out, code := sh(t, s, "echo hi > "+extra+"/made.txt && cat "+extra+"/made.txt"); code != 0 || out != "hi\n" {
		t.Errorf("writing the additional directory: %d %q", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(extra, "made.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("on the host: %q %v", b, err)
	}
	if _, code := sh(t, s, "echo x >> "+extra+"/.git/config"); code == 0 {
		t.Error("changed .git/config inside the additional directory")
	}
	if b, _ := os.ReadFile(filepath.Join(extra, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if _, code := sh(t, s, "cat "+outside+"/sibling.txt"); code == 0 {
		t.Error("a directory beside the additional one is visible")
	}
	if _, err := New(Config{Workspace: t.TempDir(), Writable: []string{"/usr"}}); err == nil {
		t.Error("a system directory was made writable")
	}
}
