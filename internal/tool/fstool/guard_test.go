package fstool

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

// denyGuard refuses reading any file named .env (or anything under secret/), reading a
// file with more than one hard link, and writing under docs/private. It records what it
// was asked.
type denyGuard struct{ asked []string }

var errDenied = errors.New("denied by the test guard")

func (g *denyGuard) Read(rel string, named bool, links uint64) error {
	g.asked = append(g.asked, "read "+rel)
	if path.Base(rel) == ".env" || strings.HasPrefix(rel, "secret/") || rel == "secret" || links > 1 {
		return errDenied
	}
	return nil
}

func (g *denyGuard) Write(rel string, named bool) error {
	g.asked = append(g.asked, "write "+rel)
	if strings.HasPrefix(rel, "docs/private/") {
		return errDenied
	}
	return nil
}

func guardedWS(t *testing.T) (*tool.Workspace, *denyGuard) {
	t.Helper()
	ws := newWS(t)
	g := &denyGuard{}
	ws.Guard = g
	writeFile(t, ws, ".env", "CANARY=1\n")
	writeFile(t, ws, "sub/.env", "CANARY=2\n")
	writeFile(t, ws, "secret/a.txt", "CANARY=3\n")
	writeFile(t, ws, "docs/private/x.md", "private\n")
	writeFile(t, ws, "ok.txt", "fine\n")
	for link, target := range map[string]string{"link": ".env", "sublink": "sub/.env", "pl": "docs/private", "sl": "secret"} {
		if err := os.Symlink(target, filepath.Join(ws.Dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(ws.Dir, ".env"), filepath.Join(ws.Dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	return ws, g
}

// A read deny holds for read through a symbolic link (to a file or a directory) and a hard
// link; ls and find leave denied entries out; write and edit through a symbolic link to a
// denied directory are refused.
func TestGuardEveryForm(t *testing.T) {
	ws, _ := guardedWS(t)
	for _, p := range []string{".env", "link", "sublink", "sl/a.txt", "hard.txt", "./sub/../link"} {
		res, err := call(t, Read(ws), map[string]any{"path": p})
		if !errors.Is(err, errDenied) {
			t.Errorf("read %s = %q, %v; want the guard's refusal", p, text(res), err)
		}
	}
	if got := mustText(t, Read(ws), map[string]any{"path": "ok.txt"}); got != "fine" {
		t.Errorf("read ok.txt = %q", got)
	}
	ls := mustText(t, Ls(ws), map[string]any{})
	for _, name := range []string{".env", "link", "sublink", "secret/", "sl/"} {
		if strings.Contains("\n"+ls+"\n", "\n"+name+"\n") {
			t.Errorf("ls lists the denied entry %s:\n%s", name, ls)
		}
	}
	if !strings.Contains(ls, "ok.txt") || !strings.Contains(ls, "hard.txt") {
		t.Errorf("ls left out allowed entries (a hard link is listed by name):\n%s", ls)
	}
	if _, err := call(t, Ls(ws), map[string]any{"path": "sl"}); !errors.Is(err, errDenied) {
		t.Errorf("ls through a link to a denied directory: %v", err)
	}
	found := mustText(t, Find(ws), map[string]any{"pattern": "**"})
	for _, name := range []string{".env", "sub/.env", "secret/a.txt"} {
		if strings.Contains("\n"+found+"\n", "\n"+name+"\n") {
			t.Errorf("find lists the denied %s:\n%s", name, found)
		}
	}
	if !strings.Contains(found, "ok.txt") {
		t.Errorf("find left out ok.txt:\n%s", found)
	}
	if _, err := call(t, Write(ws), map[string]any{"path": "pl/new.md", "content": "x"}); !errors.Is(err, errDenied) {
		t.Errorf("write pl/new.md: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(ws.Dir, "docs/private/new.md")); err == nil {
		t.Error("write through pl created docs/private/new.md")
	}
	if _, err := call(t, Edit(ws), map[string]any{"path": "pl/x.md", "edits": []map[string]string{{"oldText": "private", "newText": "public"}}}); !errors.Is(err, errDenied) {
		t.Errorf("edit pl/x.md: %v", err)
	}
	if got := readFile(t, ws, "docs/private/x.md"); got != "private\n" {
		t.Errorf("edit through pl changed docs/private/x.md: %q", got)
	}
	// edit shows the file's lines, so a read deny refuses it too.
	if _, err := call(t, Edit(ws), map[string]any{"path": "link", "edits": []map[string]string{{"oldText": "CANARY", "newText": "X"}}}); !errors.Is(err, errDenied) {
		t.Errorf("edit through a link to .env: %v", err)
	}
}

// The guard is told whether the path it judges is the one the call named.
func TestGuardNamed(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "a.txt", "a\n")
	if err := os.Symlink("a.txt", filepath.Join(ws.Dir, "b")); err != nil {
		t.Fatal(err)
	}
	var named []bool
	ws.Guard = guardFunc(func(rel string, n bool) { named = append(named, n) })
	mustText(t, Read(ws), map[string]any{"path": "a.txt"})
	mustText(t, Read(ws), map[string]any{"path": "b"})
	if len(named) != 2 || !named[0] || named[1] {
		t.Errorf("named = %v, want [true false]", named)
	}
}

type guardFunc func(rel string, named bool)

func (f guardFunc) Read(rel string, named bool, _ uint64) error { f(rel, named); return nil }
func (f guardFunc) Write(rel string, named bool) error          { f(rel, named); return nil }
