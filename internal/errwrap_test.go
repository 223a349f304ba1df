package internal_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// allowedErrorf lists the fmt.Errorf calls that may format an error value with a verb other
// than %w (so errors.Is/As cannot reach it). An entry names a file relative to the module root
// and, optionally, the call's format string; an empty format covers the whole file. Every
// entry says why.
var allowedErrorf = []struct {
	file, format, reason string
}{
	// Files other engineers are rewriting for issue #11; the integrator sweeps them.
}

// TestErrorfKeepsCauses fails when a fmt.Errorf call formats an error-typed argument with %v,
// %s or %q instead of %w: the message reads the same, but the cause is cut off the chain, so
// errors.Is and errors.AsType (and with them the exit-code table) no longer see it. The check
// is type-aware: it type-checks the module's non-test packages with go/types.
func TestErrorfKeepsCauses(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and type-checks the whole module")
	}
	pkgs := loadTyped(t)
	errType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	used := make([]bool, len(allowedErrorf))
	calls := 0
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isErrorf(p.TypesInfo, call) {
					return true
				}
				calls++
				format, ok := constFormat(p.TypesInfo, call)
				if !ok {
					t.Errorf("%s: fmt.Errorf with a non-constant format; the check cannot read it", p.Fset.Position(call.Pos()))
					return true
				}
				for _, v := range verbArgs(format) {
					if v.verb == 'w' || v.arg+1 >= len(call.Args) {
						continue
					}
					arg := call.Args[v.arg+1]
					tv, ok := p.TypesInfo.Types[arg]
					if !ok || tv.Type == nil || !types.Implements(tv.Type, errType) {
						continue
					}
					pos := p.Fset.Position(call.Pos())
					if i := allowedIndex(relFile(pos.Filename), format); i >= 0 {
						used[i] = true
						continue
					}
					t.Errorf("%s: fmt.Errorf(%q) formats the error %s with %%%c; use %%w so errors.Is/As reach it (or allow it in allowedErrorf with a reason)",
						pos, format, types.ExprString(arg), v.verb)
				}
				return true
			})
		}
	}
	if calls < 100 {
		t.Fatalf("found only %d fmt.Errorf calls; the scan is not reading the module", calls)
	}
	for i, a := range allowedErrorf {
		if !used[i] && a.format != "" {
			t.Errorf("allowedErrorf entry %s %q matches no call; remove it", a.file, a.format)
		}
	}
}

// typedPkg is one of the module's packages, parsed and type-checked.
type typedPkg struct {
	Fset      *token.FileSet
	Syntax    []*ast.File
	TypesInfo *types.Info
}

// loadTyped type-checks the module's non-test packages from source, importing every
// dependency from the export data `go list -export` reports (the standard library only: no
// go/packages, which would add a module).
func loadTyped(t *testing.T) []typedPkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f",
		"{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \" \"}}\t{{len .CgoFiles}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	type src struct{ path, dir, files string }
	var srcs []src
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 5 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		exports[f[0]] = f[1]
		if isOwn(f[0]) {
			if f[4] != "0" {
				t.Fatalf("%s uses cgo; the check cannot type-check it from source", f[0])
			}
			srcs = append(srcs, src{f[0], f[2], f[3]})
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if e := exports[path]; e != "" {
			return os.Open(e)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	var pkgs []typedPkg
	for _, s := range srcs {
		p := typedPkg{Fset: fset, TypesInfo: &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}}
		for _, name := range strings.Fields(s.files) {
			f, err := parser.ParseFile(fset, filepath.Join(s.dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			p.Syntax = append(p.Syntax, f)
		}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(s.path, fset, p.Syntax, p.TypesInfo); err != nil {
			t.Fatalf("type-check %s: %v", s.path, err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("loaded only %d packages", len(pkgs))
	}
	return pkgs
}

func isErrorf(info *types.Info, call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Errorf" {
		return false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	return ok && fn.Pkg() != nil && fn.Pkg().Path() == "fmt"
}

func constFormat(info *types.Info, call *ast.CallExpr) (string, bool) {
	if len(call.Args) == 0 {
		return "", false
	}
	tv := info.Types[call.Args[0]]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// relFile returns a file name relative to the module root (the parent of this directory).
func relFile(name string) string {
	root, err := filepath.Abs("..")
	if err != nil {
		return name
	}
	if r, err := filepath.Rel(root, name); err == nil {
		return filepath.ToSlash(r)
	}
	return name
}

func allowedIndex(file, format string) int {
	for i, a := range allowedErrorf {
		match := file == a.file || (strings.HasSuffix(a.file, "/") && strings.HasPrefix(file, a.file))
		if match && (a.format == "" || a.format == format) {
			return i
		}
	}
	return -1
}

type verbArg struct {
	verb rune
	arg  int // index into the arguments after the format
}

// verbArgs maps each verb of a Printf format to the argument it consumes, following fmt's
// rules for flags, explicit argument indexes ([n]) and star widths and precisions.
func verbArgs(format string) []verbArg {
	var out []verbArg
	arg := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		// index reads an optional [n] and sets arg from it.
		index := func() {
			if i < len(format) && format[i] == '[' {
				j := strings.IndexByte(format[i:], ']')
				if j < 0 {
					return
				}
				n := 0
				for _, c := range format[i+1 : i+j] {
					n = n*10 + int(c-'0')
				}
				arg = n - 1
				i += j + 1
			}
		}
		// number skips a width or precision, consuming an argument for a star.
		number := func() {
			index()
			if i < len(format) && format[i] == '*' {
				arg++
				i++
				return
			}
			for i < len(format) && format[i] >= '0' && format[i] <= '9' {
				i++
			}
		}
		number()
		if i < len(format) && format[i] == '.' {
			i++
			number()
		}
		index()
		if i >= len(format) {
			break
		}
		if format[i] == '%' {
			continue
		}
		out = append(out, verbArg{verb: rune(format[i]), arg: arg})
		arg++
	}
	return out
}

func TestVerbArgs(t *testing.T) {
	cases := []struct {
		format string
		want   []verbArg
	}{
		{"%w: %v", []verbArg{{'w', 0}, {'v', 1}}},
		{"100%% %s", []verbArg{{'s', 0}}},
		{"%*d %-8.3q", []verbArg{{'d', 1}, {'q', 2}}},
		{"%[2]v %[1]w", []verbArg{{'v', 1}, {'w', 0}}},
		{"%.*s%v", []verbArg{{'s', 1}, {'v', 2}}},
	}
	for _, c := range cases {
		got := verbArgs(c.format)
		if len(got) != len(c.want) {
			t.Errorf("verbArgs(%q) = %v, want %v", c.format, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("verbArgs(%q) = %v, want %v", c.format, got, c.want)
				break
			}
		}
	}
}
