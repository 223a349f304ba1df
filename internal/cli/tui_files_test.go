package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestUIWorkspaceFiles: outside git the workspace is walked (.git-less, every file); the
// listing is relative and slash-separated.
func TestUIWorkspaceFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.go", "sub/b.md"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := workspaceFiles(context.Background(), dir)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"a.go", "sub/b.md"}) {
		t.Errorf("files = %q, %v", got, err)
	}
}
