package telemetry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttributesByConstruction keeps the rule of attr.go checkable: only span.go writes to an
// OpenTelemetry span, and only attr.go (plus the resource in telemetry.go) makes attribute
// values, so every exported value goes through a constructor that admits no free text. The
// OTLP encoder (otlpenc.go) reads values to encode them and may name no constructor.
func TestAttributesByConstruction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// What otlpenc.go may name of package attribute: types and type constants, nothing that
	// makes a value.
	encoderReads := map[string]bool{"Value": true, "Distinct": true, "BOOL": true, "INT64": true, "FLOAT64": true,
		"STRING": true, "BOOLSLICE": true, "INT64SLICE": true, "FLOAT64SLICE": true, "STRINGSLICE": true,
		"BYTESLICE": true, "SLICE": true, "MAP": true}
	spanWrites := map[string]bool{"SetAttributes": true, "AddEvent": true, "SetStatus": true, "RecordError": true, "SetName": true, "AddLink": true}
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
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if spanWrites[sel.Sel.Name] && f != "span.go" {
				t.Errorf("%s: %s writes to a span; only span.go may", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "attribute" && sel.Sel.Name != "KeyValue" &&
				f != "attr.go" && f != "telemetry.go" && (f != "otlpenc.go" || !encoderReads[sel.Sel.Name]) {
				t.Errorf("%s: attribute.%s outside attr.go", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 4 {
		t.Fatalf("checked %d files", checked)
	}
}
