package telemetry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttributesByConstruction keeps the rule of attr.go checkable: only span.go writes to a
// span's record, and only attr.go (plus the resource, resource.go) makes attribute values,
// so every exported value goes through a constructor that admits no free text. The encoders
// read values and may make none.
func TestAttributesByConstruction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	makers := map[string]bool{"boolValue": true, "intValue": true, "floatValue": true, "stringValue": true, "stringsValue": true}
	// The fields of a span's record that hold what instrumentation set.
	recordWrites := map[string]bool{"Attributes": true, "Events": true, "Status": true}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		checked++
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && makers[id.Name] && f != "attr.go" && f != "resource.go" {
					t.Errorf("%s: %s makes an attribute value outside attr.go", fset.Position(n.Pos()), id.Name)
				}
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && recordWrites[sel.Sel.Name] && f != "span.go" && !buildsOutput(f, sel) {
						t.Errorf("%s: %s is written outside span.go", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
	if checked < 8 {
		t.Fatalf("checked %d files", checked)
	}
}

// buildsOutput: the encoders build their own output types (always in a variable named out,
// or rs for an OTLP resource), whose fields share names with the record's.
func buildsOutput(f string, sel *ast.SelectorExpr) bool {
	if f != "otlpenc.go" && f != "stdout.go" {
		return false
	}
	var x ast.Expr = sel
	for {
		switch e := x.(type) {
		case *ast.SelectorExpr:
			x = e.X
			continue
		case *ast.Ident:
			return e.Name == "out" || e.Name == "rs"
		}
		return false
	}
}
