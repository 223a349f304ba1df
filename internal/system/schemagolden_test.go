package system

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/mcp"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tool/grep"
	"github.com/reinhq/rein/internal/tool/shell"
)

var updateSchemas = flag.Bool("update-schemas", false, "rewrite testdata/schemas/*.json from the schemas the tools offer")

// TestSchemasGolden pins the argument schema of every tool the composition root offers (full
// and brief), the MCP search tool's and every delivery-run contract's, byte for byte: the model
// receives them with every request, so the bytes must not move when the code that builds them
// changes (request-size figures and `rein context` depend on them).
func TestSchemasGolden(t *testing.T) {
	ws := &tool.Workspace{Dir: t.TempDir()}
	tools := append(fstool.All(ws), shell.New(ws.Dir, shell.Options{}), grep.New(ws, grep.Options{}),
		mcp.NewCatalog(nil).SearchTool())
	got := map[string][]byte{}
	for _, tl := range tools {
		name := tl.Spec().Name
		got["tool-"+name] = tl.Spec().Schema
		if b := tool.Brief(tl); b != tl {
			got["tool-"+name+"-brief"] = b.Spec().Schema
		}
	}
	for _, k := range []contract.Kind{contract.KindResearch, contract.KindSpecification, contract.KindTicketPlanning,
		contract.KindTicketReview, contract.KindTicketCandidate} {
		c, err := contract.For(k)
		if err != nil {
			t.Fatal(err)
		}
		got["contract-"+string(k)] = c.Schema()
	}
	dir := filepath.Join("testdata", "schemas")
	if *updateSchemas {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(got) {
		t.Errorf("%d golden files in %s, %d schemas built; run with -update-schemas after a deliberate change", len(files), dir, len(got))
	}
	for name, b := range got {
		want, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s schema changed:\ngot  %s\nwant %s", name, b, want)
		}
	}
}
