package artifact_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/artifact"
)

// goldenPack is a fixed pack whose canonical JSON and digest were computed outside Go (Python:
// json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False), then hashlib.sha256).
// Its strings exercise escaping: a tab, quotes, '<' '>' '&', non-ASCII, U+2028, a C0 control
// and DEL.
var goldenPack = artifact.Pack{
	Name:    "golden\tpack <&>",
	Version: "1.0",
	References: []artifact.Reference{
		{
			ID: `spec "v1"`, Path: ".rein/runs/r1/spec.md",
			Digest:     helloWorld,
			FileDigest: "sha256:e52eedcd423adde158282b7881e318c3431fdcc14a8220efd3d40c2e2a29517b",
		},
		{ID: "notes-é\u2028\x01\x7f", Path: "docs/été/notes.md", Digest: emptySum, FileDigest: emptySum},
	},
}

const goldenCanonical = `{"name":"golden\tpack <&>","references":[{"digest":"sha256:e0bfbb0c2d280fc86313ac988e6b5315d2a57844335cf62146b65b6a62820775","fileDigest":"sha256:e52eedcd423adde158282b7881e318c3431fdcc14a8220efd3d40c2e2a29517b","id":"spec \"v1\"","path":".rein/runs/r1/spec.md"},{"digest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","fileDigest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","id":"notes-é` + "\u2028" + `\u0001` + "\x7f" + `","path":"docs/été/notes.md"}],"version":"1.0"}`

const goldenPackDigest = "sha256:14937886084a039c24462cd1a99133782893e28ab7f3125cd8fd7d15938239e9"

func TestPackDigestGolden(t *testing.T) {
	c, err := goldenPack.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if string(c) != goldenCanonical {
		t.Errorf("canonical JSON:\n got %q\nwant %q", c, goldenCanonical)
	}
	d, err := goldenPack.Digest()
	if err != nil || d != goldenPackDigest {
		t.Errorf("Digest = %s, %v; want %s", d, err, goldenPackDigest)
	}
	// The empty pack.
	if d, err := (artifact.Pack{}).Digest(); err != nil || d != "sha256:2b9dce10b60cde23b12216093cb4a3da7186602c5a3eee2964fb52751fae157f" {
		t.Errorf(`empty pack digest = %s, %v; want sha256 of {"references":[]}`, d, err)
	}
	// The digest depends on order, on every field, and not on the JSON spelling it came from.
	swapped := goldenPack
	swapped.References = []artifact.Reference{goldenPack.References[1], goldenPack.References[0]}
	if d, _ := swapped.Digest(); d == goldenPackDigest {
		t.Error("reordering references kept the digest")
	}
	renamed := goldenPack
	renamed.Version = "1.1"
	if d, _ := renamed.Digest(); d == goldenPackDigest {
		t.Error("changing the version kept the digest")
	}
	spelled := "{ \"version\": \"1.0\",\n \"references\": [" +
		`{"path":".rein/runs/r1/spec.md","id":"spec \u0022v1\u0022","fileDigest":"sha256:e52eedcd423adde158282b7881e318c3431fdcc14a8220efd3d40c2e2a29517b","digest":"sha256:e0bfbb0c2d280fc86313ac988e6b5315d2a57844335cf62146b65b6a62820775"},` +
		`{"id":"notes-\u00e9\u2028\u0001` + "\x7f" + `","path":"docs/été/notes.md","digest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","fileDigest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}` +
		"], \"name\": \"golden\\tpack \\u003c&>\" }"
	p, err := artifact.ParsePack([]byte(spelled))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goldenPack, p); diff != "" {
		t.Errorf("ParsePack (-want +got):\n%s", diff)
	}
	if d, _ := p.Digest(); d != goldenPackDigest {
		t.Errorf("digest after ParsePack = %s", d)
	}
	if rt, err := artifact.ParsePack(c); err != nil || cmp.Diff(goldenPack, rt) != "" {
		t.Errorf("canonical JSON does not round-trip: %v", err)
	}
}

func TestParsePackStrict(t *testing.T) {
	for _, in := range []string{
		`{"references":[],"extra":1}`,
		`{"References":[]}`,
		`{"references":[],"references":[]}`,
		`{"references":[{"id":"a","path":"a.md","digest":"` + helloWorld + `","fileDigest":"` + helloWorld + `","x":1}]}`,
		`{"references":[]} {}`,
		`{"references":[{"id":"a","path":"a.md","digest":"sha256:00","fileDigest":"` + helloWorld + `"}]}`,
		`{"references":[{"id":"a","path":"../a.md","digest":"` + helloWorld + `","fileDigest":"` + helloWorld + `"}]}`,
	} {
		if _, err := artifact.ParsePack([]byte(in)); err == nil {
			t.Errorf("ParsePack(%s) accepted", in)
		}
	}
}

func TestPackValidate(t *testing.T) {
	ok := artifact.Reference{ID: "a", Path: "a.md", Digest: helloWorld, FileDigest: helloWorld}
	with := func(f func(*artifact.Reference)) artifact.Pack {
		r := ok
		f(&r)
		return artifact.Pack{References: []artifact.Reference{r}}
	}
	for _, tc := range []struct {
		name string
		pack artifact.Pack
		want error
	}{
		{"empty id", with(func(r *artifact.Reference) { r.ID = "" }), artifact.ErrInvalidReference},
		{"bad digest", with(func(r *artifact.Reference) { r.Digest = "sha256:abc" }), artifact.ErrInvalidReference},
		{"bad fileDigest", with(func(r *artifact.Reference) { r.FileDigest = "" }), artifact.ErrInvalidReference},
		{"empty path", with(func(r *artifact.Reference) { r.Path = "" }), artifact.ErrInvalidReference},
		{"dot path", with(func(r *artifact.Reference) { r.Path = "." }), artifact.ErrInvalidReference},
		{"dot element", with(func(r *artifact.Reference) { r.Path = "./a.md" }), artifact.ErrInvalidReference},
		{"empty element", with(func(r *artifact.Reference) { r.Path = "a//b.md" }), artifact.ErrInvalidReference},
		{"trailing slash", with(func(r *artifact.Reference) { r.Path = "a/" }), artifact.ErrInvalidReference},
		{"backslash", with(func(r *artifact.Reference) { r.Path = `a\b.md` }), artifact.ErrInvalidReference},
		{"invalid UTF-8 path", with(func(r *artifact.Reference) { r.Path = "a\xff.md" }), artifact.ErrInvalidReference},
		{"dotdot", with(func(r *artifact.Reference) { r.Path = "../a.md" }), artifact.ErrOutsideRoots},
		{"inner dotdot that climbs", with(func(r *artifact.Reference) { r.Path = "a/../../b.md" }), artifact.ErrOutsideRoots},
		{"inner dotdot that stays", with(func(r *artifact.Reference) { r.Path = "a/../b.md" }), artifact.ErrInvalidReference},
		{"absolute", with(func(r *artifact.Reference) { r.Path = "/etc/passwd" }), artifact.ErrOutsideRoots},
		{"duplicate id", artifact.Pack{References: []artifact.Reference{ok, ok}}, artifact.ErrInvalidReference},
		{"invalid UTF-8 name", artifact.Pack{Name: "\xff"}, artifact.ErrInvalidReference},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.pack.Validate()
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate = %v, want %v", err, tc.want)
			}
			if _, err := tc.pack.Digest(); !errors.Is(err, tc.want) {
				t.Errorf("Digest = %v, want %v", err, tc.want)
			}
		})
	}
	if err := (artifact.Pack{References: []artifact.Reference{ok}}).Validate(); err != nil {
		t.Errorf("valid pack: %v", err)
	}
}

// fixture is a project root with three artifacts and a directory outside it.
type fixture struct {
	root, outside string
	pack          artifact.Pack
}

var fixtureFiles = []struct{ id, path, content string }{
	{"research", ".rein/runs/r1/research.md", "---\nid: research\ntype: research\n---\n\n# Research\n\nFacts.\n"},
	{"spec", ".rein/runs/r1/spec.md", "---\nid: spec\ntype: specification\n---\n\n# Spec\n\nThe system shall log.\n"},
	{"agents", "AGENTS.md", "# Agents\r\n\r\nRun the tests.\r\n"},
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{root: filepath.Join(base, "project"), outside: filepath.Join(base, "outside")}
	var srcs []artifact.Source
	for _, a := range fixtureFiles {
		f.write(t, f.root, a.path, a.content)
		srcs = append(srcs, artifact.Source{ID: a.id, Path: a.path})
	}
	if err := os.MkdirAll(f.outside, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := artifact.Build("r1", "1", srcs, f.root)
	if err != nil {
		t.Fatal(err)
	}
	f.pack = p
	return f
}

func (f *fixture) write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func TestBuildAndOpen(t *testing.T) {
	f := newFixture(t)
	for i, a := range fixtureFiles {
		r := f.pack.References[i]
		d, fd, err := artifact.Digests([]byte(a.content))
		if err != nil {
			t.Fatal(err)
		}
		want := artifact.Reference{ID: a.id, Path: a.path, Digest: d, FileDigest: fd}
		if r != want {
			t.Errorf("reference %d = %+v, want %+v", i, r, want)
		}
	}
	op, err := artifact.Open(f.pack, f.root)
	if err != nil {
		t.Fatal(err)
	}
	if len(op.Artifacts) != 3 || op.Artifacts[2].Reference.ID != "agents" || op.Artifacts[0].Root != f.root {
		t.Fatalf("opened %+v", op.Artifacts)
	}
	if d, _ := f.pack.Digest(); op.Digest != d {
		t.Errorf("opened digest %s, want %s", op.Digest, d)
	}
	if string(op.Artifacts[2].Artifact.Body) != "# Agents\n\nRun the tests.\n" {
		t.Errorf("body = %q", op.Artifacts[2].Artifact.Body)
	}

	// Build accepts an absolute path inside a root and a non-canonical relative one, and records
	// canonical relative paths.
	p, err := artifact.Build("", "", []artifact.Source{
		{ID: "spec", Path: f.path(".rein/runs/r1/spec.md")},
		{ID: "agents", Path: "./.rein/../AGENTS.md"},
	}, f.root)
	if err != nil {
		t.Fatal(err)
	}
	if p.References[0].Path != ".rein/runs/r1/spec.md" || p.References[1].Path != "AGENTS.md" {
		t.Errorf("paths = %q, %q", p.References[0].Path, p.References[1].Path)
	}
}

// openErr opens the fixture pack and returns its single problem.
func openErr(t *testing.T, p artifact.Pack, roots ...string) *artifact.ReferenceError {
	t.Helper()
	op, err := artifact.Open(p, roots...)
	if err == nil {
		t.Fatal("Open succeeded")
	}
	if op != nil {
		t.Fatal("Open returned a partial pack with its error")
	}
	pe, ok := errors.AsType[*artifact.PackError](err)
	if !ok {
		t.Fatalf("Open error %T: %v, want *PackError", err, err)
	}
	if len(pe.Problems) != 1 {
		t.Fatalf("problems: %v", err)
	}
	re, ok := errors.AsType[*artifact.ReferenceError](err)
	if !ok || re != pe.Problems[0] {
		t.Fatalf("errors.AsType[*ReferenceError] = %v", re)
	}
	return re
}

func TestOpenTampering(t *testing.T) {
	spec := ".rein/runs/r1/spec.md"
	specContent := fixtureFiles[1].content
	tests := []struct {
		name string
		// tamper changes the tree (and may change the pack); it returns the pack to open.
		tamper func(t *testing.T, f *fixture) artifact.Pack
		want   error
		// for ErrMismatch: whether the digest (not only the fileDigest) differs
		digestDiffers bool
	}{
		{"edit body", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.root, spec, strings.Replace(specContent, "shall log", "shall not log", 1))
			return f.pack
		}, artifact.ErrMismatch, true},
		{"edit frontmatter only", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.root, spec, strings.Replace(specContent, "type: specification", "type: plan", 1))
			return f.pack
		}, artifact.ErrMismatch, false},
		{"line endings only", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.root, spec, strings.ReplaceAll(specContent, "\n", "\r\n"))
			return f.pack
		}, artifact.ErrMismatch, false},
		{"replace by rename", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.root, "tmp.md", "---\nid: spec\n---\nSomething else.\n")
			if err := os.Rename(f.path("tmp.md"), f.path(spec)); err != nil {
				t.Fatal(err)
			}
			return f.pack
		}, artifact.ErrMismatch, true},
		{"replace by another artifact's bytes", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.root, spec, fixtureFiles[0].content)
			return f.pack
		}, artifact.ErrMismatch, true},
		{"delete", func(t *testing.T, f *fixture) artifact.Pack {
			if err := os.Remove(f.path(spec)); err != nil {
				t.Fatal(err)
			}
			return f.pack
		}, artifact.ErrMissing, false},
		{"parent directory replaced by a file", func(t *testing.T, f *fixture) artifact.Pack {
			if err := os.RemoveAll(f.path(".rein/runs/r1")); err != nil {
				t.Fatal(err)
			}
			f.write(t, f.root, ".rein/runs/r1", "x")
			p := f.pack
			p.References = p.References[1:2]
			return p
		}, artifact.ErrMissing, false},
		{"symlink swap to an identical file outside", func(t *testing.T, f *fixture) artifact.Pack {
			// The digests would match: only the confinement refuses it.
			f.write(t, f.outside, "spec.md", specContent)
			if err := os.Remove(f.path(spec)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(f.outside, "spec.md"), f.path(spec)); err != nil {
				t.Fatal(err)
			}
			return f.pack
		}, artifact.ErrOutsideRoots, false},
		{"relative symlink swap climbing out", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.outside, "spec.md", specContent)
			if err := os.Remove(f.path(spec)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../../../../outside/spec.md", f.path(spec)); err != nil {
				t.Fatal(err)
			}
			return f.pack
		}, artifact.ErrOutsideRoots, false},
		{"directory symlink swap", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.outside, "r1/spec.md", specContent)
			if err := os.Rename(f.path(".rein/runs/r1"), filepath.Join(f.outside, "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(f.outside, "r1"), f.path(".rein/runs/r1")); err != nil {
				t.Fatal(err)
			}
			p := f.pack
			p.References = p.References[1:2]
			return p
		}, artifact.ErrOutsideRoots, false},
		{"dangling symlink outside", func(t *testing.T, f *fixture) artifact.Pack {
			if err := os.Remove(f.path(spec)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(f.outside, "nothing.md"), f.path(spec)); err != nil {
				t.Fatal(err)
			}
			return f.pack
		}, artifact.ErrOutsideRoots, false},
		{"path with .. to a matching file outside", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.outside, "spec.md", specContent)
			return repath(f.pack, 1, "../outside/spec.md")
		}, artifact.ErrOutsideRoots, false},
		{"path with inner .. climbing out", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.outside, "spec.md", specContent)
			return repath(f.pack, 1, ".rein/../../outside/spec.md")
		}, artifact.ErrOutsideRoots, false},
		{"absolute path outside", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.outside, "spec.md", specContent)
			return repath(f.pack, 1, filepath.ToSlash(filepath.Join(f.outside, "spec.md")))
		}, artifact.ErrOutsideRoots, false},
		{"absolute path inside", func(t *testing.T, f *fixture) artifact.Pack {
			return repath(f.pack, 1, filepath.ToSlash(f.path(spec)))
		}, artifact.ErrOutsideRoots, false},
		{"non-canonical path", func(t *testing.T, f *fixture) artifact.Pack {
			return repath(f.pack, 1, "./"+spec)
		}, artifact.ErrInvalidReference, false},
		{"directory instead of file", func(t *testing.T, f *fixture) artifact.Pack {
			if err := os.Remove(f.path(spec)); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(f.path(spec), 0o755); err != nil {
				t.Fatal(err)
			}
			return f.pack
		}, artifact.ErrNotRegular, false},
		{"named pipe instead of file", func(t *testing.T, f *fixture) artifact.Pack {
			if err := os.Remove(f.path(spec)); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(f.path(spec), 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
			return f.pack
		}, artifact.ErrNotRegular, false},
		{"frontmatter broken", func(t *testing.T, f *fixture) artifact.Pack {
			f.write(t, f.root, spec, "---\nid: spec\n\n# Spec\n")
			return f.pack
		}, artifact.ErrMalformed, false},
		{"duplicate id", func(t *testing.T, f *fixture) artifact.Pack {
			p := f.pack
			p.References = []artifact.Reference{p.References[0], p.References[1], p.References[1]}
			return p
		}, artifact.ErrInvalidReference, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := tc.tamper(t, f)
			re := openErr(t, p, f.root)
			if !errors.Is(re, tc.want) || re.Err != tc.want {
				t.Fatalf("problem %v (Err %v), want %v", re, re.Err, tc.want)
			}
			if re.ID != "spec" {
				t.Errorf("problem names id %q, want spec", re.ID)
			}
			if tc.want != artifact.ErrMismatch {
				return
			}
			ref := p.References[re.Index]
			if re.WantDigest != ref.Digest || re.WantFileDigest != ref.FileDigest {
				t.Errorf("want digests %s %s, reference has %s %s", re.WantDigest, re.WantFileDigest, ref.Digest, ref.FileDigest)
			}
			if re.GotFileDigest == ref.FileDigest {
				t.Errorf("fileDigest reported unchanged")
			}
			if (re.GotDigest != ref.Digest) != tc.digestDiffers {
				t.Errorf("digest differs = %v, want %v", re.GotDigest != ref.Digest, tc.digestDiffers)
			}
			data, err := os.ReadFile(f.path(spec))
			if err != nil {
				t.Fatal(err)
			}
			if d, fd, _ := artifact.Digests(data); re.GotDigest != d || re.GotFileDigest != fd {
				t.Errorf("got digests %s %s, the file has %s %s", re.GotDigest, re.GotFileDigest, d, fd)
			}
		})
	}
}

func repath(p artifact.Pack, i int, path string) artifact.Pack {
	refs := append([]artifact.Reference(nil), p.References...)
	refs[i].Path = path
	p.References = refs
	return p
}

func TestOpenReportsEveryProblem(t *testing.T) {
	f := newFixture(t)
	f.write(t, f.root, fixtureFiles[0].path, "changed\n")
	if err := os.Remove(f.path(fixtureFiles[2].path)); err != nil {
		t.Fatal(err)
	}
	op, err := artifact.Open(f.pack, f.root)
	if op != nil {
		t.Fatal("partial pack returned")
	}
	pe, ok := errors.AsType[*artifact.PackError](err)
	if !ok || len(pe.Problems) != 2 {
		t.Fatalf("Open = %v, want two problems", err)
	}
	if pe.Problems[0].Index != 0 || pe.Problems[0].Err != artifact.ErrMismatch || pe.Problems[1].Index != 2 || pe.Problems[1].Err != artifact.ErrMissing {
		t.Errorf("problems = %v", err)
	}
	if !errors.Is(err, artifact.ErrMismatch) || !errors.Is(err, artifact.ErrMissing) || errors.Is(err, artifact.ErrOutsideRoots) {
		t.Errorf("errors.Is over the PackError is wrong: %v", err)
	}
	if !strings.Contains(err.Error(), `id "research"`) || !strings.Contains(err.Error(), "want "+string(f.pack.References[0].Digest)) {
		t.Errorf("message lacks id or expected digest: %v", err)
	}
}

func TestOpenRoots(t *testing.T) {
	f := newFixture(t)
	// A second root serves what the first does not hold.
	home := filepath.Join(t.TempDir(), "home")
	f.write(t, home, "skills/review/SKILL.md", "---\nname: review\ndescription: Review code.\n---\nRead the diff.\n")
	p, err := artifact.Build("", "", []artifact.Source{
		{ID: "spec", Path: ".rein/runs/r1/spec.md"},
		{ID: "skill", Path: filepath.Join(home, "skills/review/SKILL.md")},
	}, f.root, home)
	if err != nil {
		t.Fatal(err)
	}
	if p.References[1].Path != "skills/review/SKILL.md" {
		t.Errorf("path = %q", p.References[1].Path)
	}
	op, err := artifact.Open(p, f.root, home)
	if err != nil {
		t.Fatal(err)
	}
	if op.Artifacts[0].Root != f.root || op.Artifacts[1].Root != home {
		t.Errorf("roots = %s, %s", op.Artifacts[0].Root, op.Artifacts[1].Root)
	}
	// Without the second root the skill is missing; it is not looked for elsewhere.
	if re := openErr(t, p, f.root); re.Err != artifact.ErrMissing || re.ID != "skill" {
		t.Errorf("problem = %v", re)
	}
	// The first root wins: a shadowing file in it is what is read, and it fails to verify.
	f.write(t, f.root, "skills/review/SKILL.md", "shadow\n")
	if re := openErr(t, p, f.root, home); re.Err != artifact.ErrMismatch || re.ID != "skill" {
		t.Errorf("problem = %v", re)
	}
	// Build refuses an absolute path that an earlier root shadows.
	_, err = artifact.Build("", "", []artifact.Source{{ID: "skill", Path: filepath.Join(home, "skills/review/SKILL.md")}}, f.root, home)
	if !errors.Is(err, artifact.ErrInvalidReference) {
		t.Errorf("Build of a shadowed path = %v, want ErrInvalidReference", err)
	}
	// A symbolic link that stays inside its root is followed.
	if err := os.Symlink("spec.md", f.path(".rein/runs/r1/alias.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Build("", "", []artifact.Source{{ID: "alias", Path: ".rein/runs/r1/alias.md"}}, f.root); err != nil {
		t.Errorf("symlink inside the root: %v", err)
	}
	// Build refuses what Open would: outside, missing, duplicate ids.
	_, err = artifact.Build("", "", []artifact.Source{
		{ID: "a", Path: filepath.Join(f.outside, "x.md")},
		{ID: "b", Path: "../outside/x.md"},
		{ID: "c", Path: "nope.md"},
		{ID: "spec", Path: ".rein/runs/r1/spec.md"},
		{ID: "spec", Path: "AGENTS.md"},
	}, f.root)
	pe, ok := errors.AsType[*artifact.PackError](err)
	if !ok || len(pe.Problems) != 4 {
		t.Fatalf("Build = %v, want 4 problems", err)
	}
	for i, want := range []error{artifact.ErrOutsideRoots, artifact.ErrOutsideRoots, artifact.ErrMissing, artifact.ErrInvalidReference} {
		if pe.Problems[i].Err != want {
			t.Errorf("problem %d = %v, want %v", i, pe.Problems[i], want)
		}
	}
	if _, err := artifact.Open(f.pack); err == nil {
		t.Error("Open without roots succeeded")
	}
}

func TestNewReference(t *testing.T) {
	r, err := artifact.NewReference("spec", "a/spec.md", []byte("---\nid: spec\n---\nHello\r\nworld"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Digest != helloWorld || r.FileDigest == helloWorld {
		t.Errorf("reference = %+v", r)
	}
	if _, err := artifact.NewReference("spec", "../spec.md", []byte("x")); !errors.Is(err, artifact.ErrOutsideRoots) {
		t.Errorf("NewReference with .. = %v", err)
	}
}
