package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
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

func TestOneWayToDoAThing(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	seen := map[string]bool{}
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
			if !ok {
				return true
			}
			name := pkg.Name + "." + sel.Sel.Name
			for _, w := range oneWay {
				if !contains(w.calls, name) {
					continue
				}
				seen[name] = true
				if !underAny(rel, w.only) {
					t.Errorf("%s: %s outside %s: %s", fset.Position(call.Pos()), name, strings.Join(w.only, ", "), w.reason)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
