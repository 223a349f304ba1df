package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A masked file reads as empty and a masked directory as empty, by every name: directly,
// through a symbolic link, by a path computed when the command runs, and through /proc.
func TestMask(t *testing.T) {
	ws := t.TempDir()
	for name, content := range map[string]string{".env": "CANARY-1\n", "sub/.env": "CANARY-2\n", "secret/a.txt": "CANARY-3\n", "ok.txt": "fine\n"} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub/.env", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, Config{Workspace: ws, Mask: []string{
		filepath.Join(ws, ".env"), filepath.Join(ws, "link"), filepath.Join(ws, "secret"), filepath.Join(ws, "missing"),
	}})
	out, _ := sh(t, s, `cat .env; cat $(printf .e; printf nv); cat sub/.env; cat link; cat "$PWD/secret/a.txt"; ls -A secret; `+
		`cat /proc/self/root$PWD/.env; cat ok.txt; echo x > secret/new; echo rc=$?`)
	if strings.Contains(out, "CANARY") {
		t.Errorf("a masked path was read:\n%s", out)
	}
	if !strings.Contains(out, "fine") || strings.Contains(out, "rc=0") {
		t.Errorf("want ok.txt readable and the masked directory read-only:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "secret/new")); err == nil {
		t.Error("a file was created in the masked directory")
	}
	for _, bad := range [][]string{{"relative"}, {ws}, {filepath.Dir(ws)}} {
		if _, err := New(Config{Workspace: ws, Mask: bad}); err == nil {
			t.Errorf("Mask %v accepted", bad)
		}
	}
}
