package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/cli"
)

// internalSentinels may map to ExitInternal, each for the reason given: conditions that are
// bugs in rein, or that never end a command (they become a tool result the model sees), or
// that callers always classify by wrapping them in a condition of their own.
var internalSentinels = map[string]string{
	"ledger.ErrReadOnly":           "a write through a read-only handle is a bug in rein",
	"ledger.ErrClosed":             "a use after Close is a bug in rein",
	"ledger.ErrDuplicateID":        "rein assigns record ids; a duplicate is a bug in rein",
	"ledger.ErrUnknownParent":      "rein links the records it writes; a dangling parent is a bug in rein",
	"ledger.ErrTooLarge":           "large payloads go to blobs; an oversized record is a bug in rein",
	"kernel.ErrCompactionFailed":   "a failed compaction exits with the code of its cause (model, hook, interruption); one without such a cause is a bug in rein",
	"rpc.ErrClosed":                "stdout closed under the RPC server: the channel itself failed, and nobody reads a result",
	"tool.ErrUnknownTool":          "a call of an unknown tool becomes a tool result the model sees, never an exit",
	"tool.ErrOutsideWorkspace":     "a path outside the workspace becomes a tool result the model sees, never an exit",
	"tool/grep.ErrPattern":         "a bad search pattern becomes a tool result the model sees, never an exit",
	"run/contract.ErrRefused":      "a refused stage contract becomes a tool result the stage's model sees and corrects",
	"strictjson.ErrTooLarge":       "callers wrap it in their own condition (configuration, usage, a tool result)",
	"session.ErrInvalidRecord":     "a record the session refuses to write breaks its rules: a bug in rein, and nothing of it reached the ledger",
	"contextpack.ErrPrefixMissing": "rein builds every stage request with the prefix its context hook cuts at; a request without it is a bug in rein, refused before anything is sent",
}

// sentinel is an exported error variable of an internal package: var ErrX = errors.New(...)
// or fmt.Errorf(...).
type sentinel struct {
	importPath, name, pos string
}

// String names the sentinel by its package's path under internal/ (two packages may share a
// name): "ledger.ErrLocked", "run/contract.ErrRefused".
func (s sentinel) String() string {
	return strings.TrimPrefix(s.importPath, "github.com/reinhq/rein/internal/") + "." + s.name
}

// TestSentinelsHaveExitCodes finds every exported sentinel error of the module's internal
// packages by parsing their source, and fails when a wrapped instance of one exits with
// ExitInternal without a reason in internalSentinels. The values are read by a generated
// program (built through an overlay, so nothing is written into the tree): no hand list to
// keep in step, a new sentinel is checked as soon as it is declared.
func TestSentinelsHaveExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program over every internal package")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found := findSentinels(t, root)
	if len(found) < 20 {
		t.Fatalf("found only %d sentinels; the scan is not reading the source", len(found))
	}
	codes := exitCodes(t, root, found)
	seen := map[string]bool{}
	for _, s := range found {
		seen[s.String()] = true
		code, ok := codes[s.String()]
		if !ok {
			t.Errorf("%s: %s: no exit code reported", s.pos, s)
			continue
		}
		if _, allowed := internalSentinels[s.String()]; code == cli.ExitInternal && !allowed {
			t.Errorf("%s: %s exits %d (internal error) when wrapped; map it in internal/cli/exit.go and the README's exit-code table, or list it in internalSentinels with a reason", s.pos, s, code)
		}
	}
	for name := range internalSentinels {
		if !seen[name] {
			t.Errorf("internalSentinels lists %s, which is no longer declared; remove it", name)
		}
	}
}

// findSentinels parses the non-test Go files under root/internal.
func findSentinels(t *testing.T, root string) []sentinel {
	t.Helper()
	var out []sentinel
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if ok, err := build.Default.MatchFile(filepath.Dir(path), d.Name()); err != nil || !ok {
			return err // a file this platform does not build
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		importPath := "github.com/reinhq/rein/" + filepath.ToSlash(rel)
		for _, name := range sentinelNames(f) {
			out = append(out, sentinel{importPath: importPath, name: name.Name, pos: fset.Position(name.Pos()).String()})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sentinelNames returns the exported package-level Err* variables of f initialised by
// errors.New or fmt.Errorf.
func sentinelNames(f *ast.File) []*ast.Ident {
	imports := map[string]string{} // local name → path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	var out []*ast.Ident
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !name.IsExported() || !strings.HasPrefix(name.Name, "Err") || i >= len(vs.Values) {
					continue
				}
				call, ok := vs.Values[i].(*ast.CallExpr)
				if !ok {
					continue
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					continue
				}
				if p := imports[x.Name]; p == "errors" && sel.Sel.Name == "New" || p == "fmt" && sel.Sel.Name == "Errorf" {
					out = append(out, name)
				}
			}
		}
	}
	return out
}

// exitCodes builds and runs a program that prints cli.ExitCode of each sentinel wrapped once,
// as callers return it. The program lives only in an overlay.
func exitCodes(t *testing.T, root string, found []sentinel) map[string]int {
	t.Helper()
	var src bytes.Buffer
	src.WriteString("package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/reinhq/rein/internal/cli\"\n")
	var paths []string
	for _, s := range found {
		if !slices.Contains(paths, s.importPath) {
			paths = append(paths, s.importPath)
		}
	}
	for i, p := range paths {
		fmt.Fprintf(&src, "\tp%d %q\n", i, p)
	}
	src.WriteString(")\n\nfunc main() {\n")
	for _, s := range found {
		fmt.Fprintf(&src, "\tfmt.Println(%q, cli.ExitCode(fmt.Errorf(\"doing something: %%w\", p%d.%s)))\n",
			s.String(), slices.Index(paths, s.importPath), s.name)
	}
	src.WriteString("}\n")

	dir := t.TempDir()
	mainFile := filepath.Join(dir, "main.go")
	if err := os.WriteFile(mainFile, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(root, "internal", "cli", "zz_sentinelcheck", "main.go")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{virtual: mainFile}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-overlay", overlayFile, "./internal/cli/zz_sentinelcheck")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run the sentinel check: %v\n%s\n%s", err, stderr.String(), src.String())
	}
	codes := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, code, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(code)
		if !ok || err != nil {
			t.Fatalf("unexpected line %q", sc.Text())
		}
		codes[name] = n
	}
	return codes
}
