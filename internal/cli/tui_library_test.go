package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUILibraryReadsRealSessions: the UI's library lists the sessions `rein -p` recorded with
// their first prompt and cost, lays out a session's entries, and exports it redacted.
func TestUILibraryReadsRealSessions(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("REIN_HOME", home)
	t.Chdir(dir)
	tok := "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYZq9R"
	if err := os.WriteFile("s.yaml", []byte("version: 1\nturns:\n  - text: The key is "+tok+".\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"--script", "s.yaml", "-p", "what is the key?"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	cwd, _ := os.Getwd()
	h := &uiHost{home: home, dir: cwd}
	list, err := h.Sessions(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v, %v", list, err)
	}
	s := list[0]
	if s.FirstPrompt != "what is the key?" || s.Entries != 2 || s.Err != "" {
		t.Errorf("summary %+v", s)
	}
	tree, err := h.Tree(context.Background(), s.ID, s.Dir)
	if err != nil || len(tree) != 2 || tree[1].Parent != tree[0].ID || !tree[1].OnPath || tree[1].Role != "assistant" {
		t.Fatalf("tree %+v, %v", tree, err)
	}
	path, notice, err := h.Export(context.Background(), s.ID, s.Dir, "out.md")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if path != filepath.Join(cwd, "out.md") || strings.Contains(string(data), tok) || !strings.Contains(string(data), "what is the key?") || notice == "" {
		t.Errorf("export to %s (notice %q):\n%s", path, notice, data)
	}
}
