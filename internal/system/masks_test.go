package system

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
)

// The masks cover what the read rules deny or ask for: matching files, a matching
// directory whole, a link whose target is denied, another hard link of a denied file and a
// hard link whose other name lies outside the workspace; .git is not entered.
func TestReadMasks(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".env", "a/.env", "secret/x.txt", "secret/y/z.txt", "ok.txt", ".git/.env", "ask.txt"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a/.env", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a/.env"), filepath.Join(dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "secret/x.txt"), filepath.Join(dir, "hard2.txt")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "o.txt")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(policy.Config{Dir: dir, Rules: policy.Rules{Deny: []string{"read(**/.env)", "read(secret)"}, Ask: []string{"read(ask.txt)"}}})
	if err != nil {
		t.Fatal(err)
	}
	masks, err := readMasks(pol, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range masks {
		r, _ := filepath.Rel(dir, m)
		got = append(got, r)
	}
	slices.Sort(got)
	want := []string{".env", "a/.env", "a/.env", "ask.txt", "hard.txt", "hard2.txt", "out.txt", "secret"}
	if !slices.Equal(got, want) {
		t.Errorf("masks = %q, want %q", got, want)
	}
}

// The Guard refuses what the rules deny, a hard-linked file while read rules deny paths,
// and an ask it cannot put to the user.
func TestPathGuard(t *testing.T) {
	dir := t.TempDir()
	pol, err := newPolicy(policy.Rules{Deny: []string{"read(**/.env)", "write(docs/private/**)"}, Ask: []string{"read(ask/**)"}}, dir, dir, filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	g := pathGuard{policy: pol}
	check := func(what string, err error, code refusal.Code) {
		t.Helper()
		if got, _ := refusal.CodeOf(err); got != code {
			t.Errorf("%s: %v, want code %q", what, err, code)
		}
	}
	check("read .env", g.Read("sub/.env", false, 1), policy.CodeDenied)
	check("read home/auth.json", g.Read("home/auth.json", true, 1), policy.CodeProtectedPath)
	check("read a hard link", g.Read("notes.txt", true, 2), pathrule.CodeHardLinked)
	check("read ok", g.Read("notes.txt", true, 1), "")
	check("ask, named", g.Read("ask/x", true, 1), "")
	check("ask, reached", g.Read("ask/x", false, 1), policy.CodeApprovalRequired)
	check("write private", g.Write("docs/private/new.md", false), policy.CodeDenied)
	check("write ok", g.Write("docs/new.md", true), "")
	open, _ := newPolicy(policy.Rules{}, dir, dir, "")
	if err := (pathGuard{policy: open}).Read("notes.txt", true, 3); err != nil {
		t.Errorf("a hard link without read rules: %v", err)
	}
}

// TestReadMasksExtraRoots: the masks cover the additional directories too, their paths
// judged as the file tools judge them (a relative rule holds inside each, an absolute one by
// its absolute path): a denied file, a denied directory whole, a link in the workspace to a
// denied file of the additional directory (its target masked), and a hard link whose other
// name lies in the additional directory counts as found.
func TestReadMasksExtraRoots(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	extra := filepath.Join(outside, "shared")
	for _, p := range []string{filepath.Join(dir, "ok.txt"), filepath.Join(extra, ".env"), filepath.Join(extra, "lib", ".env"),
		filepath.Join(extra, "keys", "id"), filepath.Join(extra, "lib", "util.go"), filepath.Join(extra, "both.txt")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(extra, "lib", ".env"), filepath.Join(dir, "envlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(extra, "both.txt"), filepath.Join(dir, "both.txt")); err != nil {
		t.Fatal(err)
	}
	rules := policy.Rules{Deny: []string{"read(**/.env)", "read(" + filepath.ToSlash(extra) + "/keys)"}}
	pol, err := newPolicy(rules, dir, dir, "", extra)
	if err != nil {
		t.Fatal(err)
	}
	masks, err := readMasks(pol, dir, []string{extra})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(masks)
	want := []string{filepath.Join(extra, ".env"), filepath.Join(extra, "keys"), filepath.Join(extra, "lib", ".env"), filepath.Join(extra, "lib", ".env")}
	slices.Sort(want)
	if !slices.Equal(masks, want) {
		t.Errorf("masks = %q\nwant %q", masks, want)
	}
	// Without the additional directory walked, its files are not masked (and the hard link
	// to a name the walk did not find is).
	masks, _ = readMasks(pol, dir, nil)
	if slices.Contains(masks, filepath.Join(extra, ".env")) || !slices.Contains(masks, filepath.Join(dir, "both.txt")) {
		t.Errorf("workspace only: %q", masks)
	}
}
