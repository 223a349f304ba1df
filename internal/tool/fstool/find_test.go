package fstool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func findRun(t *testing.T, ws *tool.Workspace, args map[string]any) (string, FindDetails) {
	t.Helper()
	res, err := call(t, Find(ws), args)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := res.Details.(FindDetails)
	return text(res), d
}

func fixture(t *testing.T, ws *tool.Workspace) {
	for _, f := range []string{"a.go", "sub/b.go", "sub/deep/c_test.go", "ignored/d.go", "x.log", ".hidden.go", "README.md", "deleted.go"} {
		writeFile(t, ws, f, "package x\n")
	}
	writeFile(t, ws, ".gitignore", "ignored/\n*.log\n")
}

func TestFindGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ws := newWS(t)
	fixture(t, ws)
	git(t, ws.Dir, "init", "-q")
	git(t, ws.Dir, "add", "a.go", "deleted.go", ".gitignore")
	if err := os.Remove(filepath.Join(ws.Dir, "deleted.go")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "*.go"}, ".hidden.go\na.go\nsub/b.go\nsub/deep/c_test.go"},
		{map[string]any{"pattern": "**/*_test.go"}, "sub/deep/c_test.go"},
		{map[string]any{"pattern": "sub/*"}, "sub/b.go\nsub/deep/"},
		{map[string]any{"pattern": "*.log"}, "No files found matching pattern"},
		{map[string]any{"pattern": "deep"}, "sub/deep/"},
		{map[string]any{"pattern": "*.go", "path": "sub"}, "b.go\ndeep/c_test.go"},
		{map[string]any{"pattern": "*.go", "limit": 2}, ".hidden.go\na.go\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"},
		{map[string]any{"pattern": "./*.md"}, "README.md"},
	}
	for _, tt := range tests {
		got, d := findRun(t, ws, tt.args)
		if got != tt.want {
			t.Errorf("find %v:\n%s\nwant:\n%s", tt.args, got, tt.want)
		}
		if d.Source != "git" && got != "No files found matching pattern" {
			t.Errorf("find %v: source %q, want git", tt.args, d.Source)
		}
	}
}

func TestFindWalk(t *testing.T) {
	ws := newWS(t)
	fixture(t, ws)
	writeFile(t, ws, ".git/config.go", "") // a .git directory without a repository: skipped
	got, d := findRun(t, ws, map[string]any{"pattern": "*.go"})
	if d.Source != "walk" {
		t.Skipf("temporary directory is inside a git work tree (source %q)", d.Source)
	}
	if want := ".hidden.go\na.go\ndeleted.go\nignored/d.go\nsub/b.go\nsub/deep/c_test.go"; got != want {
		t.Errorf("find:\n%s\nwant:\n%s", got, want)
	}
	if got, _ := findRun(t, ws, map[string]any{"pattern": "sub/**/*.go"}); got != "sub/b.go\nsub/deep/c_test.go" {
		t.Errorf("find sub/**: %q", got)
	}
	if got, _ := findRun(t, ws, map[string]any{"pattern": "*", "path": "sub/deep"}); got != "c_test.go" {
		t.Errorf("find in sub/deep: %q", got)
	}
}

func TestFindDefaultLimit(t *testing.T) {
	ws := newWS(t)
	for i := range DefaultFindLimit + 1 {
		writeFile(t, ws, fmt.Sprintf("d%d/f%04d.txt", i%10, i), "")
	}
	got, d := findRun(t, ws, map[string]any{"pattern": "*.txt"})
	if d.ResultLimitReached != DefaultFindLimit || strings.Count(got, "\n") != DefaultFindLimit+1 ||
		!strings.HasSuffix(got, "\n\n[1000 results limit reached. Use limit=2000 for more, or refine pattern]") {
		t.Errorf("details %+v, output ends %q", d, tail(got))
	}
}

func TestFindErrors(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "f.txt", "")
	for args, want := range map[string]string{
		`{"pattern":"[a"}`:               "invalid glob pattern",
		`{"pattern":"*","path":"f.txt"}`: "Not a directory: f.txt",
		`{"pattern":"*","path":"nope"}`:  "path not found: nope",
	} {
		if got := errText(t, Find(ws), args); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
	if _, err := tool.ValidateCall(Find(ws), `{"pattern":""}`); err == nil {
		t.Error("empty pattern accepted")
	}
}
