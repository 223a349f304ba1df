package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"Write": Write, "Replace": Replace} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.json")
			if err := write(p, []byte("one"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := write(p, []byte("two"), 0o600); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(p)
			st, _ := os.Stat(p)
			if string(data) != "two" || st.Mode().Perm() != 0o600 {
				t.Errorf("content %q mode %v", data, st.Mode().Perm())
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("temporary files left behind: %v", entries)
			}
			if err := write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
				t.Error("a write into a missing directory succeeded")
			}
		})
	}
}
