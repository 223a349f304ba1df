package fstool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLs(t *testing.T) {
	ws := newWS(t)
	for _, f := range []string{"b.txt", "A.txt", ".hidden", "Dir/x", "c/y", "a.md"} {
		writeFile(t, ws, f, "")
	}
	if err := os.Symlink("/nonexistent/target", filepath.Join(ws.Dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(ws.Dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("c", filepath.Join(ws.Dir, "clink")); err != nil {
		t.Fatal(err)
	}
	l := Ls(ws)
	if got, want := mustText(t, l, map[string]any{}), ".hidden\na.md\nA.txt\nb.txt\nc/\nclink/\nDir/"; got != want {
		t.Errorf("ls:\n%s\nwant:\n%s", got, want)
	}
	if got := mustText(t, l, map[string]any{"path": "c"}); got != "y" {
		t.Errorf("ls c: %q", got)
	}
	if got, want := mustText(t, l, map[string]any{"limit": 2}), ".hidden\na.md\n\n[2 entries limit reached. Use limit=4 for more]"; got != want {
		t.Errorf("ls limit:\n%s", got)
	}
	writeFile(t, ws, "empty/.keep", "")
	os.Remove(filepath.Join(ws.Dir, "empty/.keep"))
	if got := mustText(t, l, map[string]any{"path": "empty"}); got != "(empty directory)" {
		t.Errorf("empty: %q", got)
	}
	if got := errText(t, l, map[string]any{"path": "b.txt"}); got != "Not a directory: b.txt" {
		t.Errorf("file: %q", got)
	}
	if got := errText(t, l, map[string]any{"path": "nope"}); !strings.Contains(got, "path not found: nope") {
		t.Errorf("missing: %q", got)
	}
}

func TestLsDefaultLimit(t *testing.T) {
	ws := newWS(t)
	for i := range DefaultLsLimit + 1 {
		writeFile(t, ws, fmt.Sprintf("f%04d", i), "")
	}
	res, err := call(t, Ls(ws), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	got := text(res)
	if !strings.HasSuffix(got, "f0499\n\n[500 entries limit reached. Use limit=1000 for more]") || strings.Count(got, "\n") != 501 {
		t.Errorf("listing ends %q", tail(got))
	}
	if d := res.Details.(LsDetails); d.EntryLimitReached != 500 {
		t.Errorf("details %+v", d)
	}
	if got := mustText(t, Ls(ws), map[string]any{"limit": 501}); strings.Contains(got, "limit reached") {
		t.Errorf("501 entries with limit 501: %q", tail(got))
	}
}
