package grep_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/grep"
)

// absGuard refuses reading files named .env, and records the paths it is asked about.
type absGuard struct{ seen *[]string }

func (g absGuard) Read(rel string, named bool, links uint64) error {
	*g.seen = append(*g.seen, rel)
	return envGuard{}.Read(rel, named, links)
}
func (absGuard) Write(string, bool) error { return nil }

// TestExtraRoot: grep searches an additional directory (permissions.additionalDirectories) by
// absolute path, reporting absolute paths, confined like the workspace: a symbolic link
// leading out of the extra root is refused or skipped, a sibling directory is outside, and
// the Guard judges each file by its absolute path (a denied .env is never shown, named or
// met while walking). Both backends, in and out of a git work tree.
func TestExtraRoot(t *testing.T) {
	for _, inGit := range []bool{false, true} {
		forEachBackend(t, func(t *testing.T, b grep.Backend) {
			outside, _ := filepath.EvalSymlinks(t.TempDir())
			extra := filepath.Join(outside, "shared")
			write(t, extra, "lib/util.go", "package lib\n// NEEDLE in lib\n")
			write(t, extra, "lib/.env", "NEEDLE=secret\n")
			write(t, outside, "secret.txt", "NEEDLE outside\n")
			write(t, outside, "sibling/x.go", "NEEDLE sibling\n")
			if err := os.Symlink("../secret.txt", filepath.Join(extra, "escape.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(extra, "up")); err != nil {
				t.Fatal(err)
			}
			if inGit {
				requireGit(t)
				gitCmd(t, extra, "init", "-q")
				gitCmd(t, extra, "add", ".")
			}
			ws, err := tool.OpenWorkspace(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			var seen []string
			ws.Guard = absGuard{seen: &seen}
			if err := ws.AddExtra(extra); err != nil {
				t.Fatal(err)
			}
			g := grep.New(ws, grep.Options{Backend: b})
			res, err := runGrep(t, g, `{"pattern":"NEEDLE","path":"`+extra+`"}`)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.ToSlash(extra) + "/lib/util.go:2: // NEEDLE in lib"
			if out := text(res); out != want {
				t.Errorf("grep the extra root:\n%s\nwant:\n%s", out, want)
			}
			if !strings.Contains(strings.Join(seen, "\n"), filepath.ToSlash(extra)+"/lib/util.go") {
				t.Errorf("the guard was not asked about the absolute path: %v", seen)
			}
			res, err = runGrep(t, g, `{"pattern":"NEEDLE","path":"`+filepath.Join(extra, "lib")+`","glob":"*.go","context":1}`)
			if err != nil || !strings.Contains(text(res), "/lib/util.go-1- package lib") {
				t.Errorf("grep a directory of the extra root with glob and context: %q %v", text(res), err)
			}
			for _, p := range []string{filepath.Join(extra, "escape.txt"), filepath.Join(extra, "up", "sibling"), filepath.Join(outside, "sibling"), filepath.Join(extra, "..", "secret.txt")} {
				if res, err := runGrep(t, g, `{"pattern":"NEEDLE","path":"`+p+`"}`); !errors.Is(err, tool.ErrOutsideWorkspace) {
					t.Errorf("grep %s = %q, %v; want ErrOutsideWorkspace", p, text(res), err)
				}
			}
			if res, err := runGrep(t, g, `{"pattern":"NEEDLE","path":"`+filepath.Join(extra, "lib", ".env")+`"}`); !errors.Is(err, errDenied) {
				t.Errorf("grep the denied .env = %q, %v; want the guard's refusal", text(res), err)
			}
			// The workspace's own search does not reach the extra root.
			if res, err := runGrep(t, g, `{"pattern":"NEEDLE"}`); err != nil || text(res) != "No matches found" {
				t.Errorf("grep the workspace = %q, %v", text(res), err)
			}
		})
	}
}
