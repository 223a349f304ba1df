package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/tool"
)

// TestAttachMentions: a prompt's @path mentions attach a file's text, a directory's entries
// and a binary file's name, through the runtime's own workspace: a path outside it (named
// or through a symbolic link), one a read rule denies and a missing one are refused with a
// reason; a mention that names nothing (@alice) is text; trailing punctuation is not part
// of the path; a file mentioned twice is attached once.
func TestAttachMentions(t *testing.T) {
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	files := map[string]string{
		filepath.Join(ws, "notes.md"): "alpha\nbeta\n", filepath.Join(ws, "sub", "x.go"): "package sub\n",
		filepath.Join(ws, "sub", "y.go"): "package sub\n", filepath.Join(ws, "blob.dat"): "\x00\x01\x02binary",
		filepath.Join(ws, "secret.txt"): "hunter2\n", filepath.Join(root, "outside.txt"): "not yours\n",
		filepath.Join(ws, "s.yaml"):          "version: 1\nturns:\n  - text: ok\n",
		filepath.Join(home, "settings.json"): `{"permissions": {"deny": ["read(secret.txt)"]}}`,
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	rt, err := system.Open(context.Background(), system.Options{Provider: llm.ProviderScript, Script: filepath.Join(ws, "s.yaml"),
		Dir: ws, Home: home, Getenv: func(string) string { return "" }, Session: system.SessionChoice{Mode: system.SessionNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })

	text := "compare @notes.md, @sub and @blob.dat; not @secret.txt @../outside.txt @link.txt @gone/file.go — ask @alice about `@notes.md` and @notes.md"
	atts, notices := (&uiHost{}).Attach(context.Background(), rt, text)
	var got []string
	for _, a := range atts {
		got = append(got, a.Kind+" "+a.Path+": "+a.Summary)
	}
	want := []string{"file notes.md: 2 lines, 10B", "directory sub: directory, 2 entries", "binary blob.dat: binary file, 9B, not inlined"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("attachments:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if atts[0].Text != "alpha\nbeta" {
		t.Errorf("the file's text is %q", atts[0].Text)
	}
	if !strings.Contains(atts[1].Text, "x.go") || !strings.Contains(atts[1].Text, "y.go") {
		t.Errorf("the directory's entries are %q", atts[1].Text)
	}
	if strings.Contains(atts[2].Text, "binary\x00") || strings.Contains(atts[2].Text, "\x01") {
		t.Errorf("the binary file was inlined: %q", atts[2].Text)
	}
	joined := strings.Join(notices, "\n")
	for _, w := range []string{"@secret.txt not attached: ", "@../outside.txt not attached: it is outside the workspace", "@link.txt not attached: ", "@gone/file.go not attached: no such file"} {
		if !strings.Contains(joined, w) {
			t.Errorf("the notices lack %q:\n%s", w, joined)
		}
	}
	if len(notices) != 4 || strings.Contains(joined, "alice") || strings.Contains(joined, "hunter2") || strings.Contains(joined, "not yours") {
		t.Errorf("notices:\n%s", joined)
	}
	for _, a := range atts {
		if strings.Contains(a.Text, "hunter2") || strings.Contains(a.Text, "not yours") {
			t.Errorf("a refused file's text was attached: %+v", a)
		}
	}

	// A long file is capped as one read call is, with the note saying how to go on.
	long := strings.Repeat("line\n", tool.MaxLines+500)
	if err := os.WriteFile(filepath.Join(ws, "long.txt"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	atts, _ = (&uiHost{}).Attach(context.Background(), rt, "@long.txt")
	if len(atts) != 1 || strings.Count(atts[0].Text, "line\n") > tool.MaxLines || !strings.Contains(atts[0].Text, "Use offset=") {
		t.Errorf("the long file is not capped at %d lines with a note: %d attachments, %d lines", tool.MaxLines, len(atts), strings.Count(atts[0].Text, "\n"))
	}
}
