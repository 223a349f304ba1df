package grep_test

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/grep"
)

// envGuard refuses reading files named .env and files with more than one hard link.
type envGuard struct{}

var errDenied = errors.New("denied by the test guard")

func (envGuard) Read(rel string, named bool, links uint64) error {
	if path.Base(rel) == ".env" || links > 1 {
		return errDenied
	}
	return nil
}
func (envGuard) Write(string, bool) error { return nil }

// A file the workspace's Guard refuses is never searched or shown: not in a directory
// search, with a glob that selects it, with context lines, through a symbolic link to it,
// nor through a hard link; named directly, the call is refused.
func TestGuardedSearch(t *testing.T) {
	for _, inGit := range []bool{false, true} {
		forEachBackend(t, func(t *testing.T, b grep.Backend) {
			dir := t.TempDir()
			for _, name := range []string{".env", "a/.env", "a/b/.env"} {
				write(t, dir, name, "before\nCANARY=secret\nafter\n")
			}
			write(t, dir, "ok.txt", "CANARY=public\n")
			if err := os.Symlink(".env", filepath.Join(dir, "envlink")); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(filepath.Join(dir, "a/.env"), filepath.Join(dir, "hard.txt")); err != nil {
				t.Fatal(err)
			}
			if inGit {
				requireGit(t)
				gitCmd(t, dir, "init", "-q")
				gitCmd(t, dir, "add", ".")
			}
			ws, err := tool.OpenWorkspace(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			ws.Guard = envGuard{}
			g := grep.New(ws, grep.Options{Backend: b})
			for _, args := range []string{
				`{"pattern":"CANARY"}`,
				`{"pattern":"CANARY","glob":".env"}`,
				`{"pattern":"CANARY","glob":"**/.env"}`,
				`{"pattern":"public","context":5}`,
				`{"pattern":"CANARY","path":"a"}`,
				`{"pattern":"CANARY","path":"a/b","context":3}`,
				`{"pattern":"secret","ignoreCase":true,"literal":true}`,
			} {
				res, err := runGrep(t, g, args)
				if err != nil {
					t.Fatalf("grep %s: %v", args, err)
				}
				if out := text(res); strings.Contains(out, "secret") || strings.Contains(out, "before") {
					t.Errorf("grep %s (git %v) shows a denied file:\n%s", args, inGit, out)
				}
			}
			for _, p := range []string{".env", "envlink", "hard.txt", "a/b/.env"} {
				if res, err := runGrep(t, g, `{"pattern":"CANARY","path":"`+p+`"}`); !errors.Is(err, errDenied) {
					t.Errorf("grep path %s = %q, %v; want the guard's refusal", p, text(res), err)
				}
			}
			res, err := runGrep(t, g, `{"pattern":"CANARY"}`)
			if err != nil || !strings.Contains(text(res), "ok.txt:1: CANARY=public") {
				t.Errorf("grep left out the allowed file: %q, %v", text(res), err)
			}
		})
	}
}
