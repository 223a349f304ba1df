package fstool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

// writeGuard records the writes it is asked about and refuses deny.
type writeGuard struct {
	recordGuard
	writes []string
	denyW  string
}

func (g *writeGuard) Write(rel string, named bool) error {
	g.writes = append(g.writes, rel)
	if rel == g.denyW {
		return fmt.Errorf("denied: %s", rel)
	}
	return nil
}

// TestExtraRoots: an additional directory outside the workspace is read, written, edited,
// listed and searched by absolute path, confined like the workspace (a link leading out of it
// is refused, a sibling is outside), its files judged by the Guard by absolute path, the
// workspace's protected paths (.git) holding inside it.
func TestExtraRoots(t *testing.T) {
	ws := newWS(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	extra := filepath.Join(outside, "shared")
	for p, content := range map[string]string{"lib/util.go": "package lib\n", "../secret.txt": "no\n", ".git/config": "[core]\n"} {
		full := filepath.Join(extra, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret.txt", filepath.Join(extra, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	g := &writeGuard{}
	ws.Guard = g
	if err := ws.AddExtra(extra); err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.Join(extra, p) }
	if _, err := call(t, Write(ws), map[string]any{"path": abs("lib/new.go"), "content": "package lib // new\n"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(abs("lib/new.go")); string(b) != "package lib // new\n" {
		t.Errorf("written %q", b)
	}
	if want := filepath.ToSlash(abs("lib/new.go")); len(g.writes) != 1 || g.writes[0] != want {
		t.Errorf("guard saw writes %v, want [%s]", g.writes, want)
	}
	if _, err := call(t, Edit(ws), map[string]any{"path": abs("lib/util.go"), "edits": []map[string]string{{"oldText": "package lib", "newText": "package util"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, Read(ws), map[string]any{"path": abs("lib/util.go")})
	if err != nil || !strings.Contains(res.Content[0].Text, "package util") {
		t.Errorf("read back: %v %v", res, err)
	}
	if res, err := call(t, Ls(ws), map[string]any{"path": abs("lib")}); err != nil || !strings.Contains(res.Content[0].Text, "new.go") {
		t.Errorf("ls: %v %v", res, err)
	}
	if res, err := call(t, Find(ws), map[string]any{"pattern": "*.go", "path": extra}); err != nil || !strings.Contains(res.Content[0].Text, "util.go") {
		t.Errorf("find: %v %v", res, err)
	}
	for _, p := range []string{abs("escape.txt"), filepath.Join(outside, "secret.txt")} {
		if _, err := call(t, Write(ws), map[string]any{"path": p, "content": "x"}); !errors.Is(err, tool.ErrOutsideWorkspace) {
			t.Errorf("write %s: %v, want ErrOutsideWorkspace", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "no\n" {
		t.Error("the file outside the additional directory changed")
	}
	if _, err := call(t, Write(ws), map[string]any{"path": abs(".git/config"), "content": "x"}); err == nil {
		t.Error("wrote .git/config inside the additional directory")
	}
	g.denyW = filepath.ToSlash(abs("lib/util.go"))
	if _, err := call(t, Write(ws), map[string]any{"path": abs("lib/util.go"), "content": "x"}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("the guard's refusal must hold in an additional directory: %v", err)
	}
}
