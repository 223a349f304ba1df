package artifact_test

import (
	"bytes"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

func TestRenderGolden(t *testing.T) {
	if artifact.RenderVersion != 1 {
		t.Fatalf("RenderVersion = %d; this golden is version 1", artifact.RenderVersion)
	}
	base := t.TempDir()
	f := &fixture{}
	f.write(t, base, "a.md", "---\nid: a\n---\n\nLine one  \r\nLine \"two\"\r\n\r\n")
	f.write(t, base, "dir/empty.md", "---\nid: empty\n---\n")
	p, err := artifact.Build("req \"x\"", "", []artifact.Source{{ID: "a", Path: "a.md"}, {ID: `e<"1">`, Path: "dir/empty.md"}}, base)
	if err != nil {
		t.Fatal(err)
	}
	op, err := artifact.Open(p, base)
	if err != nil {
		t.Fatal(err)
	}
	ra, re := p.References[0], p.References[1]
	want := `<artifact-pack digest="` + string(op.Digest) + `" name="req \"x\"" count="2">` + "\n" +
		`<artifact id="a" path="a.md" digest="` + string(ra.Digest) + `" fileDigest="` + string(ra.FileDigest) + `" bytes="20">` + "\n" +
		"Line one\nLine \"two\"\n" +
		`</artifact digest="` + string(ra.Digest) + `">` + "\n" +
		`<artifact id="e<\"1\">" path="dir/empty.md" digest="` + emptySum + `" fileDigest="` + string(re.FileDigest) + `" bytes="0">` + "\n" +
		`</artifact digest="` + emptySum + `">` + "\n" +
		`</artifact-pack digest="` + string(op.Digest) + `">` + "\n"
	if got := string(artifact.Render(op)); got != want {
		t.Errorf("Render:\n got %q\nwant %q", got, want)
	}
}

func TestRenderDeterministic(t *testing.T) {
	f := newFixture(t)
	op1, err := artifact.Open(f.pack, f.root)
	if err != nil {
		t.Fatal(err)
	}
	first := artifact.Render(op1)
	for range 5 {
		op, err := artifact.Open(f.pack, f.root)
		if err != nil {
			t.Fatal(err)
		}
		if got := artifact.Render(op); !bytes.Equal(got, first) {
			t.Fatalf("renders differ:\n%s\n---\n%s", first, got)
		}
	}
	// Frontmatter is not rendered: changing it and rebuilding renders the same artifact section.
	f.write(t, f.root, fixtureFiles[1].path, "---\nid: spec\ntype: specification\nattempt: 3\n---\n# Spec\n\nThe system shall log.\n")
	p2, err := artifact.Build("r1", "1", []artifact.Source{{ID: "research", Path: fixtureFiles[0].path}, {ID: "spec", Path: fixtureFiles[1].path}, {ID: "agents", Path: fixtureFiles[2].path}}, f.root)
	if err != nil {
		t.Fatal(err)
	}
	op2, err := artifact.Open(p2, f.root)
	if err != nil {
		t.Fatal(err)
	}
	second := artifact.Render(op2)
	if bytes.Equal(first, second) {
		t.Fatal("a new fileDigest must show in the render")
	}
	strip := func(b []byte, from, to artifact.Digest) []byte { return bytes.ReplaceAll(b, []byte(from), []byte(to)) }
	if !bytes.Equal(strip(strip(second, op2.Digest, op1.Digest), p2.References[1].FileDigest, f.pack.References[1].FileDigest), first) {
		t.Error("renders differ by more than the pack and file digests")
	}
	// Order matters.
	swapped := p2
	swapped.References = []artifact.Reference{p2.References[1], p2.References[0], p2.References[2]}
	op3, err := artifact.Open(swapped, f.root)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(artifact.Render(op3), second) {
		t.Error("reordered pack rendered the same")
	}
}
