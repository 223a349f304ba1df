package fstool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// writeArgsFor builds write or edit arguments that would change "orig" into "pwned".
func writeArgsFor(name, p string) map[string]any {
	if name == "write" {
		return map[string]any{"path": p, "content": "pwned"}
	}
	return map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "orig", "newText": "pwned"}}}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestProtectedPathsRefused: every way of naming a protected path, directly or through a
// link inside the workspace, is refused for write and edit with CodeProtectedPath and a
// message saying why; nothing changes.
func TestProtectedPathsRefused(t *testing.T) {
	ws := newWS(t)
	for _, f := range []string{
		".git/config", ".git/hooks/pre-commit", "sub/.git", "nested/repo/.git/HEAD",
		".rein/settings.json", ".rein/SYSTEM.md", ".rein/APPEND_SYSTEM.md", ".rein/skills/go/SKILL.md",
		"pkg/.rein/SYSTEM.md",
		"sessions/p/0123/ledger.jsonl", "sessions/p/0123/ledger.lock", "sessions/p/0123/ledger.jsonl.torn-7",
		"sessions/p/0123/blobs/sha256/ab/abcd", "store/sha256/00/ff", "blobs/sha256/cd/cdef",
	} {
		writeFile(t, ws, f, "orig\n")
	}
	symlink(t, ".git", filepath.Join(ws.Dir, "gitlink"))
	symlink(t, ".git/config", filepath.Join(ws.Dir, "cfg"))
	symlink(t, "../.git/hooks", filepath.Join(ws.Dir, "dir/hooks"))
	symlink(t, ".git/hooks/post-checkout", filepath.Join(ws.Dir, "dangling"))
	symlink(t, "cfg", filepath.Join(ws.Dir, "chain"))
	symlink(t, "pkg/.REIN", filepath.Join(ws.Dir, "reinlink"))
	symlink(t, "sessions/p/0123", filepath.Join(ws.Dir, "sess"))

	cases := []struct {
		name, path, why string
	}{
		{"git config", ".git/config", "git's internals"},
		{"git dir itself", ".git", "git's internals"},
		{"new file in .git", ".git/hooks/post-merge", "git's internals"},
		{"worktree .git file", "sub/.git", "git's internals"},
		{"nested repository", "nested/repo/.git/HEAD", "git's internals"},
		{"upper case", ".GIT/config", "git's internals"},
		{"mixed case", ".Git/hooks/pre-commit", "git's internals"},
		{"dot segments", "./src/../.git/config", "git's internals"},
		{"absolute inside", "ABS/.git/config", "git's internals"},
		{"at prefix", "@.git/config", "git's internals"},
		{"link to .git dir", "gitlink/config", "git's internals"},
		{"link to .git file", "cfg", "git's internals"},
		{"link chain", "chain", "git's internals"},
		{"relative link climbing to .git", "dir/hooks/pre-commit", "git's internals"},
		{"dangling link into .git", "dangling", "git's internals"},
		{"rein settings", ".rein/settings.json", "policy files"},
		{"rein system prompt", ".rein/SYSTEM.md", "policy files"},
		{"rein append prompt", ".rein/APPEND_SYSTEM.md", "policy files"},
		{"rein skill", ".rein/skills/go/SKILL.md", "policy files"},
		{"new rein skill", ".rein/skills/evil/SKILL.md", "policy files"},
		{"nested rein", "pkg/.rein/SYSTEM.md", "policy files"},
		{"link to nested rein, case", "reinlink/SYSTEM.md", "policy files"},
		{"ledger", "sessions/p/0123/ledger.jsonl", "ledger"},
		{"ledger through link", "sess/ledger.jsonl", "ledger"},
		{"ledger lock", "sessions/p/0123/ledger.lock", "lock"},
		{"torn evidence", "sessions/p/0123/ledger.jsonl.torn-7", "repair"},
		{"ledger blob", "sessions/p/0123/blobs/sha256/ab/abcd", "content-addressed"},
		{"top-level blob store", "blobs/sha256/cd/cdef", "content-addressed"},
	}
	for _, tl := range []tool.Tool{Write(ws), Edit(ws)} {
		name := tl.Spec().Name
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				p := strings.Replace(c.path, "ABS", ws.Dir, 1)
				_, err := call(t, tl, writeArgsFor(name, p))
				if code, _ := refusal.CodeOf(err); code != pathrule.CodeProtectedPath {
					t.Fatalf("%s %q: err = %v, want %s", name, p, err, pathrule.CodeProtectedPath)
				}
				if msg := err.Error(); !strings.Contains(msg, "protected path") || !strings.Contains(msg, c.why) || !strings.Contains(msg, "change files elsewhere") {
					t.Errorf("%s %q: message does not say why and what to do: %s", name, p, msg)
				}
			})
		}
	}
	if got := readFile(t, ws, ".git/config"); got != "orig\n" {
		t.Errorf(".git/config changed: %q", got)
	}
	for _, p := range []string{".git/hooks/post-merge", ".git/hooks/post-checkout", ".rein/skills/evil"} {
		if _, err := os.Lstat(filepath.Join(ws.Dir, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	// Reading protected paths is allowed.
	if got := mustText(t, Read(ws), map[string]any{"path": ".git/config"}); got != "orig" {
		t.Errorf("read .git/config: %q", got)
	}
}

// TestNotProtected: names that only look like protected ones are written normally.
func TestNotProtected(t *testing.T) {
	ws := newWS(t)
	for _, p := range []string{".gitignore", ".github/workflows/ci.yml", ".gitattributes", "x.git/a", "git/config",
		".reinrc", "rein/settings.json", "docs/.rein.md", "ledger.json", "my-ledger.jsonl.bak", "blobs/sha512/x", "sha256/x"} {
		mustText(t, Write(ws), map[string]any{"path": p, "content": "orig"})
		mustText(t, Edit(ws), writeArgsFor("edit", p))
		if got := readFile(t, ws, p); got != "pwned" {
			t.Errorf("%s = %q", p, got)
		}
	}
}

// TestProtectedConfigurable: the list is a field of the workspace; nil is the default, an
// empty list protects nothing, a bad glob refuses every write (fail closed).
func TestProtectedConfigurable(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, ".git/config", "orig")
	writeFile(t, ws, "secrets/key.pem", "orig")

	ws.Protected = []string{"secrets/**", filepath.Join(ws.Dir, "abs") + "/**"}
	for _, p := range []string{"secrets/key.pem", "secrets/new", "abs/x"} {
		if _, err := call(t, Write(ws), writeArgsFor("write", p)); !errors.Is(err, &refusal.Error{Code: pathrule.CodeProtectedPath}) {
			t.Errorf("custom list: write %s: %v", p, err)
		}
	}
	mustText(t, Edit(ws), writeArgsFor("edit", ".git/config")) // not in the custom list

	ws.Protected = []string{}
	mustText(t, Write(ws), writeArgsFor("write", ".rein/settings.json"))

	ws.Protected = []string{"[bad"}
	if _, err := call(t, Write(ws), writeArgsFor("write", "ok.txt")); err == nil || !strings.Contains(err.Error(), "protected paths are invalid") {
		t.Errorf("bad glob: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, "ok.txt")); err == nil {
		t.Error("written despite a bad protected list")
	}
}

// TestHardLinksRefused: a file with a second name — inside or outside the workspace — is
// not written, so a hard link cannot carry a write out of the root.
func TestHardLinksRefused(t *testing.T) {
	ws := newWS(t)
	outside := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(outside, []byte("orig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "a.txt", "orig\n")
	link := func(old, new string) {
		if err := os.Link(old, new); err != nil {
			t.Skipf("hard links unavailable here: %v", err)
		}
	}
	link(outside, filepath.Join(ws.Dir, "out-link.txt"))
	link(filepath.Join(ws.Dir, "a.txt"), filepath.Join(ws.Dir, "b.txt"))
	symlink(t, "out-link.txt", filepath.Join(ws.Dir, "sym-to-hard"))

	for _, tl := range []tool.Tool{Write(ws), Edit(ws)} {
		name := tl.Spec().Name
		for _, p := range []string{"out-link.txt", "a.txt", "b.txt", "sym-to-hard"} {
			t.Run(name+"/"+p, func(t *testing.T) {
				_, err := call(t, tl, writeArgsFor(name, p))
				if code, _ := refusal.CodeOf(err); code != pathrule.CodeHardLinked {
					t.Fatalf("%s %s: err = %v, want %s", name, p, err, pathrule.CodeHardLinked)
				}
				if !strings.Contains(err.Error(), "2 hard links") || !strings.Contains(err.Error(), "nothing was written") {
					t.Errorf("message: %v", err)
				}
			})
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "orig\n" {
		t.Errorf("outside file changed through a hard link: %q", b)
	}
	if got := readFile(t, ws, "a.txt"); got != "orig\n" {
		t.Errorf("a.txt changed: %q", got)
	}
	// Breaking the link as the message says makes the name writable again.
	if err := os.Remove(filepath.Join(ws.Dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	mustText(t, Write(ws), writeArgsFor("write", "b.txt"))
	mustText(t, Edit(ws), map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "orig", "newText": "mine"}}})
}

// TestOutwardLinksNotFollowedForWrites: no tool creates links, and links that already point
// outside — absolute, relative, dangling, through a directory, in a chain — are never
// followed by a write; nothing is created or changed outside.
func TestOutwardLinksNotFollowedForWrites(t *testing.T) {
	ws := newWS(t)
	outDir := t.TempDir()
	victim := filepath.Join(outDir, "victim.txt")
	if err := os.WriteFile(victim, []byte("orig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(ws.Dir, outDir)
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, victim, filepath.Join(ws.Dir, "abs-file"))
	symlink(t, filepath.Join(rel, "victim.txt"), filepath.Join(ws.Dir, "rel-file"))
	symlink(t, filepath.Join(rel, "new.txt"), filepath.Join(ws.Dir, "dangling-out"))
	symlink(t, filepath.Join(ws.Dir, "inside.txt"), filepath.Join(ws.Dir, "abs-inside")) // absolute, even inside
	symlink(t, outDir, filepath.Join(ws.Dir, "outdir"))
	symlink(t, "../../"+filepath.ToSlash(rel), filepath.Join(ws.Dir, "deep/er/outdir"))
	symlink(t, "rel-file", filepath.Join(ws.Dir, "chain"))
	symlink(t, "loop-b", filepath.Join(ws.Dir, "loop-a"))
	symlink(t, "loop-a", filepath.Join(ws.Dir, "loop-b"))
	writeFile(t, ws, "inside.txt", "orig\n")

	for _, tl := range []tool.Tool{Write(ws), Edit(ws)} {
		name := tl.Spec().Name
		for _, p := range []string{"abs-file", "rel-file", "dangling-out", "abs-inside", "outdir/victim.txt", "outdir/new.txt",
			"outdir/sub/new.txt", "deep/er/outdir/victim.txt", "chain"} {
			t.Run(name+"/"+p, func(t *testing.T) {
				_, err := call(t, tl, writeArgsFor(name, p))
				if !errors.Is(err, tool.ErrOutsideWorkspace) {
					t.Errorf("%s %s: err = %v, want ErrOutsideWorkspace", name, p, err)
				}
			})
		}
		t.Run(name+"/loop", func(t *testing.T) {
			if _, err := call(t, tl, writeArgsFor(name, "loop-a")); err == nil || !strings.Contains(err.Error(), "symbolic links") {
				t.Errorf("%s loop-a: %v", name, err)
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "orig\n" {
		t.Errorf("outside file changed: %q", b)
	}
	entries, _ := os.ReadDir(outDir)
	if len(entries) != 1 {
		t.Errorf("files created outside: %v", entries)
	}
	// The links themselves are left as they were.
	if target, _ := os.Readlink(filepath.Join(ws.Dir, "dangling-out")); target != filepath.Join(rel, "new.txt") {
		t.Errorf("link changed: %s", target)
	}
}

// TestWriteThroughInsideLink: a link that stays inside and is not protected is followed.
func TestWriteThroughInsideLink(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "real/a.txt", "orig\n")
	symlink(t, "real", filepath.Join(ws.Dir, "alias"))
	symlink(t, "../real/a.txt", filepath.Join(ws.Dir, "x/a-link"))
	mustText(t, Edit(ws), writeArgsFor("edit", "alias/a.txt"))
	mustText(t, Write(ws), map[string]any{"path": "x/a-link", "content": "via link\n"})
	mustText(t, Write(ws), map[string]any{"path": "alias/new/b.txt", "content": "b"})
	if got := readFile(t, ws, "real/a.txt"); got != "via link\n" {
		t.Errorf("real/a.txt = %q", got)
	}
	if got := readFile(t, ws, "real/new/b.txt"); got != "b" {
		t.Errorf("real/new/b.txt = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(ws.Dir, "x/a-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
}

// TestWriteRefusesSpecialFiles: a FIFO is refused without blocking.
func TestWriteRefusesSpecialFiles(t *testing.T) {
	ws := newWS(t)
	if err := syscall.Mkfifo(filepath.Join(ws.Dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tl := range []tool.Tool{Write(ws), Edit(ws)} {
		if _, err := call(t, tl, writeArgsFor(tl.Spec().Name, "fifo")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s fifo: %v", tl.Spec().Name, err)
		}
	}
}

// TestResolveLinks checks the resolver on its own.
func TestResolveLinks(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "a/b/c.txt", "x")
	symlink(t, "a/b", filepath.Join(ws.Dir, "ab"))
	symlink(t, "../a", filepath.Join(ws.Dir, "d/up"))
	symlink(t, "..", filepath.Join(ws.Dir, "a/parent"))
	symlink(t, "../..", filepath.Join(ws.Dir, "a/grand"))
	for in, want := range map[string]string{
		"a/b/c.txt":          "a/b/c.txt",
		"ab/c.txt":           "a/b/c.txt",
		"ab/missing/x":       "a/b/missing/x",
		"d/up/b/c.txt":       "a/b/c.txt",
		"a/parent/ab/c.txt":  "a/b/c.txt",
		"a/parent/.git/x":    ".git/x",
		"a/grand/etc/passwd": "ERR",
		".":                  ".",
	} {
		got, err := resolveLinks(ws.Root, filepath.FromSlash(in))
		if err != nil {
			got = "ERR"
		}
		if filepath.ToSlash(got) != want {
			t.Errorf("resolveLinks(%q) = %q (%v), want %q", in, got, err, want)
		}
	}
}
