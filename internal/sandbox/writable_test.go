package sandbox

import (
	"os"
	"path/filepath"
	"strings"
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

// TestWritableMasked: a masked path inside an additional writable directory reads as empty by
// every name — directly, through a link in the workspace, through /proc — a masked
// directory there is empty and read-only, while the rest of the directory stays readable and
// writable.
func TestWritableMasked(t *testing.T) {
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	extra := filepath.Join(outside, "shared")
	for name, content := range map[string]string{".env": "CANARY-1\n", "keys/id": "CANARY-2\n", "ok.txt": "fine\n"} {
		p := filepath.Join(extra, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(extra, ".env"), filepath.Join(ws, "envlink")); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, Config{Workspace: ws, Writable: []string{extra}, Mask: []string{filepath.Join(extra, ".env"), filepath.Join(extra, "keys")}})
	out, _ := sh(t, s, "cat "+extra+"/.env; cat envlink; cat /proc/self/root"+extra+"/.env; cat "+extra+"/keys/id; ls -A "+extra+"/keys; "+
		"cat "+extra+"/ok.txt; echo x > "+extra+"/keys/new; echo rc=$?; echo more >> "+extra+"/ok.txt && echo wrote")
	if strings.Contains(out, "CANARY") {
		t.Errorf("a masked path of the additional directory was read:\n%s", out)
	}
	if !strings.Contains(out, "fine") || strings.Contains(out, "rc=0") || !strings.Contains(out, "wrote") {
		t.Errorf("want ok.txt readable and writable, the masked directory read-only:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(extra, "keys", "new")); err == nil {
		t.Error("a file was created in the masked directory")
	}
	if b, _ := os.ReadFile(filepath.Join(extra, ".env")); string(b) != "CANARY-1\n" {
		t.Errorf("the masked file changed on the host: %q", b)
	}
}
