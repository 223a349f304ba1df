package fstool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	ws := newWS(t)
	w := Write(ws)
	if got := mustText(t, w, map[string]any{"path": "a/b/c.txt", "content": "héllo\n"}); got != "Successfully wrote 7 bytes to a/b/c.txt" {
		t.Errorf("result %q", got)
	}
	if got := readFile(t, ws, "a/b/c.txt"); got != "héllo\n" {
		t.Errorf("content %q", got)
	}
	writeFile(t, ws, "x.sh", "old content that is longer\n")
	if err := os.Chmod(filepath.Join(ws.Dir, "x.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, w, map[string]any{"path": "x.sh", "content": "new"})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Details.(WriteDetails); d.Created || d.Bytes != 3 || d.Path != "x.sh" {
		t.Errorf("details %+v", d)
	}
	if got := readFile(t, ws, "x.sh"); got != "new" {
		t.Errorf("overwrite: %q", got)
	}
	if st, _ := os.Stat(filepath.Join(ws.Dir, "x.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("mode changed to %v", st.Mode())
	}
	if got := errText(t, w, map[string]any{"path": "a/b", "content": "x"}); !strings.Contains(got, "a/b is a directory") {
		t.Errorf("write to dir: %q", got)
	}
	if got := errText(t, w, map[string]any{"path": ".", "content": "x"}); !strings.Contains(got, "workspace directory itself") {
		t.Errorf("write to root: %q", got)
	}
}
