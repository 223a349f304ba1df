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

// recordGuard records the paths it is asked about and refuses those in deny.
type recordGuard struct {
	seen []string
	deny string
}

func (g *recordGuard) Read(rel string, named bool, links uint64) error {
	g.seen = append(g.seen, rel)
	if rel == g.deny {
		return fmt.Errorf("denied: %s", rel)
	}
	return nil
}
func (g *recordGuard) Write(string, bool) error { return nil }

// TestReadOnlyRoots: read reaches a skill directory outside the workspace through its
// read-only root — by absolute path, through a symbolic link inside it — but not a link
// leading out of it, nor a sibling directory; the Guard judges the absolute path; write, edit
// and ls never reach it.
func TestReadOnlyRoots(t *testing.T) {
	ws := newWS(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	skill := filepath.Join(outside, "skills", "pdf")
	for p, content := range map[string]string{
		"SKILL.md":            "---\nname: pdf\ndescription: d\n---\nRead references/forms.md.\n",
		"references/forms.md": "Fill the form.\n",
		"../secret.txt":       "not a skill file\n",
	} {
		full := filepath.Join(skill, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("references/forms.md", filepath.Join(skill, "forms-link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.txt", filepath.Join(skill, "escape.md")); err != nil {
		t.Fatal(err)
	}
	g := &recordGuard{}
	ws.Guard = g
	if err := ws.AddReadOnly(skill); err != nil {
		t.Fatal(err)
	}
	if err := ws.AddReadOnly(filepath.Join(ws.Dir)); err != nil || len(ws.ReadOnly) != 1 {
		t.Fatalf("the workspace itself needs no read-only root: %v %d", err, len(ws.ReadOnly))
	}
	r := Read(ws)
	res, err := call(t, r, map[string]any{"path": filepath.Join(skill, "SKILL.md")})
	if err != nil || !strings.Contains(res.Content[0].Text, "Read references/forms.md.") {
		t.Fatalf("read SKILL.md: %v %v", res, err)
	}
	if want := filepath.ToSlash(filepath.Join(skill, "SKILL.md")); len(g.seen) != 1 || g.seen[0] != want {
		t.Errorf("guard saw %v, want [%s]", g.seen, want)
	}
	if res, err := call(t, r, map[string]any{"path": filepath.Join(skill, "forms-link.md")}); err != nil || !strings.Contains(res.Content[0].Text, "Fill the form.") {
		t.Errorf("read through a link inside the skill: %v %v", res, err)
	}
	for _, p := range []string{filepath.Join(skill, "escape.md"), filepath.Join(outside, "skills", "secret.txt"), filepath.Join(skill, "..", "secret.txt")} {
		if _, err := call(t, r, map[string]any{"path": p}); !errors.Is(err, tool.ErrOutsideWorkspace) {
			t.Errorf("read %s: %v, want ErrOutsideWorkspace", p, err)
		}
	}
	g.deny = filepath.ToSlash(filepath.Join(skill, "references", "forms.md"))
	if _, err := call(t, r, map[string]any{"path": filepath.Join(skill, "references", "forms.md")}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("the guard's refusal must hold in a read-only root: %v", err)
	}
	for _, tl := range []tool.Tool{Write(ws), Ls(ws)} {
		args := map[string]any{"path": filepath.Join(skill, "SKILL.md"), "content": "x"}
		if tl.Spec().Name == "ls" {
			args = map[string]any{"path": skill}
		}
		if _, err := call(t, tl, args); !errors.Is(err, tool.ErrOutsideWorkspace) {
			t.Errorf("%s reached the read-only root: %v", tl.Spec().Name, err)
		}
	}
	if _, err := call(t, Edit(ws), map[string]any{"path": filepath.Join(skill, "SKILL.md"), "edits": []map[string]string{{"oldText": "pdf", "newText": "x"}}}); !errors.Is(err, tool.ErrOutsideWorkspace) {
		t.Errorf("edit reached the read-only root: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(skill, "SKILL.md")); !strings.Contains(string(b), "name: pdf") {
		t.Error("the skill file changed")
	}
}
