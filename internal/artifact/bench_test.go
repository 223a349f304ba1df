package artifact_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

// BenchmarkOpenPack100x5MB opens and verifies a pack of 100 artifacts of 50 KiB each (5 MiB
// in all; each file read, parsed, normalized and hashed twice). Bytes/op is the total file size.
func BenchmarkOpenPack100x5MB(b *testing.B) {
	root := b.TempDir()
	const n, size = 100, 5 << 20 / 100
	line := "The system shall record every effect before it happens, and verify it after.  \r\n"
	var srcs []artifact.Source
	total := 0
	for i := range n {
		var sb strings.Builder
		fmt.Fprintf(&sb, "---\nid: a%03d\ntype: evidence\nattempt: 1\n---\n\n# Artifact %d\n\n", i, i)
		for sb.Len()+len(line) <= size {
			sb.WriteString(line)
		}
		rel := fmt.Sprintf(".rein/runs/r1/a%03d.md", i)
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		total += sb.Len()
		srcs = append(srcs, artifact.Source{ID: fmt.Sprintf("a%03d", i), Path: rel})
	}
	pack, err := artifact.Build("bench", "1", srcs, root)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		op, err := artifact.Open(pack, root)
		if err != nil {
			b.Fatal(err)
		}
		if len(op.Artifacts) != n {
			b.Fatal("short pack")
		}
	}
}

// BenchmarkRender100x5MB renders the same size of pack.
func BenchmarkRender100x5MB(b *testing.B) {
	root := b.TempDir()
	body := strings.Repeat("A line of an artifact body, rendered into a request.\n", 5<<20/100/53)
	var srcs []artifact.Source
	for i := range 100 {
		rel := fmt.Sprintf("a%03d.md", i)
		if err := os.WriteFile(filepath.Join(root, rel), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, artifact.Source{ID: rel, Path: rel})
	}
	pack, err := artifact.Build("", "", srcs, root)
	if err != nil {
		b.Fatal(err)
	}
	op, err := artifact.Open(pack, root)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body) * 100))
	b.ReportAllocs()
	for b.Loop() {
		_ = artifact.Render(op)
	}
}
