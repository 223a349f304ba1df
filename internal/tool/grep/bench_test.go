package grep_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/grep"
)

// benchTree builds a git work tree of 2,000 source-like files (about 6 MB): 40 directories
// of 50 files of 60 lines, one file in a hundred holding a rare identifier, and an ignored
// directory that must not be read.
func benchTree(b *testing.B) *tool.Workspace {
	b.Helper()
	requireGit(b)
	dir := b.TempDir()
	for d := range 40 {
		for f := range 50 {
			var sb strings.Builder
			fmt.Fprintf(&sb, "package pkg%d\n\nimport \"fmt\"\n\n", d)
			for l := range 56 {
				if (d*50+f)%100 == 7 && l == 30 {
					fmt.Fprintf(&sb, "func HandleRareRequest%d(w Writer) error { return nil }\n", f)
					continue
				}
				fmt.Fprintf(&sb, "\tvalue%d := fmt.Sprintf(\"%%d items in batch %d of file %d\", count%d) // line %d\n", l, d, f, l, l)
			}
			write(b, dir, fmt.Sprintf("src/pkg%02d/file%02d.go", d, f), sb.String())
		}
	}
	write(b, dir, ".gitignore", "vendor/\n")
	for f := range 200 {
		write(b, dir, fmt.Sprintf("vendor/v%03d.go", f), strings.Repeat("func HandleRareRequestVendored() {}\n", 100))
	}
	gitCmd(b, dir, "init", "-q")
	ws, err := tool.OpenWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	return ws
}

func BenchmarkGrep(b *testing.B) {
	ws := benchTree(b)
	queries := []struct{ name, args string }{
		{"rare", `{"pattern":"func Handle\\w+Request\\d+\\("}`},
		{"rare-literal-ignorecase", `{"pattern":"handlerarerequest","literal":true,"ignoreCase":true}`},
		{"common-limit100", `{"pattern":"items in batch"}`},
		{"none-glob", `{"pattern":"zzz_absent","glob":"*.go"}`},
	}
	for _, name := range []string{"rg", "native"} {
		be := backends(b)[name]
		for _, q := range queries {
			b.Run(name+"/"+q.name, func(b *testing.B) {
				if be == nil {
					b.Skip("rg is not on PATH")
				}
				g := grep.New(ws, grep.Options{Backend: be})
				for b.Loop() {
					res, err := g.Run(b.Context(), tool.Call{Args: []byte(q.args)})
					if err != nil {
						b.Fatal(err)
					}
					if strings.Contains(text(res), "vendor/") {
						b.Fatal("ignored directory searched")
					}
				}
			})
		}
	}
}
