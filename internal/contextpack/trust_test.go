package contextpack_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
)

// A run in the parent of $REIN_HOME (rein in ~ with ~/.rein) must not take the home directory
// for a project .rein directory: its files are the user's global ones and need no trust.
func TestHomeIsNotAProjectReinDirectory(t *testing.T) {
	dir := realTempDir(t)
	home := filepath.Join(dir, ".rein")
	if err := os.MkdirAll(filepath.Join(home, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "SYSTEM.md"), []byte("Global system.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := contextpack.Load(contextpack.Inputs{Dir: dir, Home: home})
	if len(src.Untrusted) != 0 {
		t.Errorf("untrusted %q; $REIN_HOME is not a project directory", src.Untrusted)
	}
	if src.System == nil || src.System.Path != filepath.Join(home, "SYSTEM.md") {
		t.Errorf("system %+v; want the global SYSTEM.md", src.System)
	}
}

func TestProjectRoot(t *testing.T) {
	dir := realTempDir(t)
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := contextpack.ProjectRoot(sub); got != sub {
		t.Errorf("without .git: %s, want %s", got, sub)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := contextpack.ProjectRoot(sub); got != dir {
		t.Errorf("with .git: %s, want %s", got, dir)
	}
}
