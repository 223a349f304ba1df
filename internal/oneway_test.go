package internal_test

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

// oneWay names calls that only one package may make, so that a second path — one that skips
// hooks, telemetry, the gate, the lifecycle records or the process hardening — cannot appear
// unnoticed.
var oneWay = []struct {
	calls  []string // package-qualified calls, as written in the source
	only   []string // the directories (module-relative) allowed to make them
	reason string
}{
	{[]string{"exec.Command", "exec.CommandContext", "os.StartProcess", "syscall.Exec", "syscall.ForkExec"},
		[]string{"internal/proc", "bench"},
		"every subprocess goes through the one process runner (its own process group, killed on timeout, cancel and rein's death, bounded waits); bench's tools measure other programs from outside rein"},
	{[]string{"kernel.New"}, []string{"internal/system"},
		"every agent is built by the composition root, with its model retries, tool surface, gate, hooks, telemetry and session"},
	{[]string{"session.Create", "session.Open", "session.Fork"}, []string{"internal/system"},
		"every writable session goes through the one lifecycle (open or create, recover, begin, run, end, close); readers use session.Load"},
}

// gitOnly is where git may be named as a program: the hardened runner.
const gitOnly = "internal/gitx"

// starters are the calls that start, or look up, a program by name.
var starters = map[string]bool{"exec.Command": true, "exec.CommandContext": true, "exec.LookPath": true,
	"os.StartProcess": true, "syscall.Exec": true, "syscall.ForkExec": true}

// scan walks the non-test Go files under root and returns the calls outside their allowed
// directories, the one-way calls it saw at all, and every place outside gitOnly that names git
// as a program (a "git" or ".../git" string given to a starter, or as a Path field).
func scan(t *testing.T, root string) (misplaced []string, seen map[string]bool, git []string) {
	t.Helper()
	fset := token.NewFileSet()
	seen = map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
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
		where := func(n ast.Node) string { return rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line) }
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if name := callName(n); name != "" {
					for _, w := range oneWay {
						if contains(w.calls, name) {
							seen[name] = true
							if !underAny(rel, w.only) {
								misplaced = append(misplaced, where(n)+": "+name+" outside "+strings.Join(w.only, ", ")+": "+w.reason)
							}
						}
					}
				}
				for _, a := range n.Args {
					if starters[callName(n)] && namesGit(a) && !underAny(rel, []string{gitOnly}) {
						git = append(git, where(n))
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Path" && namesGit(n.Value) && !underAny(rel, []string{gitOnly}) {
					git = append(git, where(n))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return misplaced, seen, git
}

func callName(call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return pkg.Name + "." + sel.Sel.Name
}

func namesGit(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && (s == "git" || strings.HasSuffix(s, "/git"))
}

func TestOneWayToDoAThing(t *testing.T) {
	misplaced, seen, git := scan(t, "..")
	for _, m := range misplaced {
		t.Error(m)
	}
	for _, g := range git {
		t.Errorf("%s starts git directly; use gitx.Runner, so the hardening holds everywhere (tests may run git to build fixtures)", g)
	}
	// A rule whose calls appear nowhere checks nothing: the scan or a rename broke it.
	for _, w := range oneWay {
		found := false
		for _, c := range w.calls {
			found = found || seen[c]
		}
		if !found {
			t.Errorf("none of %v appears in the module: the rule %q checks nothing", w.calls, w.reason)
		}
	}
}

// TestOneWayScanCatches shows the scan finds each form it forbids, and skips test files.
func TestOneWayScanCatches(t *testing.T) {
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
	_ = spec{Path: "git"}
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
	misplaced, _, git := scan(t, root)
	want := "internal/x/x.go:9 internal/x/x.go:10 internal/x/x.go:11 internal/x/x.go:12 internal/x/x.go:13 internal/x/x.go:15"
	if got := strings.Join(git, " "); got != want {
		t.Errorf("git found at %v, want %v (test files exempt, gitk not git)", got, want)
	}
	if len(misplaced) != 5 {
		t.Errorf("%d misplaced exec calls, want 5 (LookPath starts nothing): %v", len(misplaced), misplaced)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func underAny(rel string, dirs []string) bool {
	for _, d := range dirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}
