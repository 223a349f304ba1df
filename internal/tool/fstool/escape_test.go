package fstool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

// TestPathEscapes runs every file tool against every way out of the workspace.
func TestPathEscapes(t *testing.T) {
	ws := newWS(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "file.txt", "secret\n")
	if err := os.Symlink(secret, filepath.Join(ws.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws.Dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../"+filepath.Base(outside), filepath.Join(ws.Dir, "rellink")); err != nil {
		t.Fatal(err)
	}

	escapes := map[string]string{ // name -> path the model sends
		"dotdot":             "../secret.txt",
		"dotdot inside":      "sub/../../secret.txt",
		"absolute outside":   "/etc/passwd",
		"absolute next door": secret,
		"symlink to file":    "link",
		"symlinked dir":      "linkdir/secret.txt",
		"symlinked dir self": "linkdir",
	}
	mkArgs := map[string]func(p string) map[string]any{
		"read":  func(p string) map[string]any { return map[string]any{"path": p} },
		"write": func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned"} },
		"edit": func(p string) map[string]any {
			return map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "secret", "newText": "pwned"}}}
		},
		"ls":   func(p string) map[string]any { return map[string]any{"path": p} },
		"find": func(p string) map[string]any { return map[string]any{"pattern": "*", "path": p} },
	}
	for _, tl := range All(ws) {
		name := tl.Spec().Name
		for what, p := range escapes {
			t.Run(name+"/"+what, func(t *testing.T) {
				_, err := call(t, tl, mkArgs[name](p))
				if !errors.Is(err, tool.ErrOutsideWorkspace) {
					t.Errorf("%s %q: err = %v, want ErrOutsideWorkspace", name, p, err)
				}
			})
		}
		t.Run(name+"/through a file", func(t *testing.T) {
			if _, err := call(t, tl, mkArgs[name]("file.txt/x")); err == nil {
				t.Errorf("%s file.txt/x: no error", name)
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret\n" {
		t.Errorf("outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("file created outside")
	}
	if got := readFile(t, ws, "file.txt"); got != "secret\n" {
		t.Errorf("file.txt changed: %q", got)
	}
}

func TestAbsolutePathInsideIsAllowed(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "dir/a.txt", "hello\n")
	abs := filepath.Join(ws.Dir, "dir", "a.txt")
	if got := mustText(t, Read(ws), map[string]any{"path": abs}); got != "hello" {
		t.Errorf("read: %q", got)
	}
	mustText(t, Edit(ws), map[string]any{"path": abs, "edits": []any{map[string]any{"oldText": "hello", "newText": "bye"}}})
	mustText(t, Write(ws), map[string]any{"path": filepath.Join(ws.Dir, "dir", "b.txt"), "content": "b"})
	if got := mustText(t, Ls(ws), map[string]any{"path": filepath.Join(ws.Dir, "dir")}); got != "a.txt\nb.txt" {
		t.Errorf("ls: %q", got)
	}
	if got := mustText(t, Find(ws), map[string]any{"pattern": "*.txt", "path": ws.Dir}); got != "dir/a.txt\ndir/b.txt" {
		t.Errorf("find: %q", got)
	}
	if got := mustText(t, Read(ws), map[string]any{"path": "@dir/a.txt"}); got != "bye" {
		t.Errorf("read @path: %q", got)
	}
}

func TestSymlinkInsideIsFollowed(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "real/a.txt", "inside\n")
	if err := os.Symlink("real", filepath.Join(ws.Dir, "alias")); err != nil {
		t.Fatal(err)
	}
	if got := mustText(t, Read(ws), map[string]any{"path": "alias/a.txt"}); got != "inside" {
		t.Errorf("read through inside link: %q", got)
	}
}
