package gitx_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// starters are the calls that start (or look up) a program by name.
var starters = map[string]bool{
	"exec.Command": true, "exec.CommandContext": true, "exec.LookPath": true,
	"os.StartProcess": true, "syscall.Exec": true, "syscall.ForkExec": true,
}

// directGitCalls lists, as "file:line", the calls in root's non-test Go files outside
// internal/gitx that start git themselves.
func directGitCalls(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "vendor" || (strings.HasPrefix(d.Name(), ".") && rel != ".") || rel == "internal/gitx" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !starters[pkg.Name+"."+sel.Sel.Name] {
				return true
			}
			for _, a := range call.Args {
				lit, ok := a.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && (s == "git" || strings.HasSuffix(s, "/git")) {
					found = append(found, rel+":"+strconv.Itoa(fset.Position(call.Pos()).Line))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestOnlyGitxStartsGit: every git process rein starts goes through gitx.Runner, so the
// hardening holds everywhere. Tests may run git directly to build fixtures.
func TestOnlyGitxStartsGit(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	for _, c := range directGitCalls(t, root) {
		t.Errorf("%s starts git directly; use gitx.Runner", c)
	}
}

// TestOnlyGitxStartsGitCatches shows the scan finds each form it forbids.
func TestOnlyGitxStartsGitCatches(t *testing.T) {
	root := t.TempDir()
	src := `package p

import (
	"context"
	"os/exec"
)

func a(ctx context.Context) {
	exec.Command("git", "status")
	exec.CommandContext(ctx, "git", "status")
	exec.LookPath("git")
	exec.Command("/usr/bin/git")
	exec.Command("go", "git") // an argument named git is still flagged: rename it
	exec.Command("gitk")
}
`
	if err := os.MkdirAll(filepath.Join(root, "internal", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"internal/x/x.go", "internal/x/x_test.go"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := directGitCalls(t, root)
	want := []string{"internal/x/x.go:9", "internal/x/x.go:10", "internal/x/x.go:11", "internal/x/x.go:12", "internal/x/x.go:13"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("found %v, want %v (test files exempt, gitk not git)", got, want)
	}
}
