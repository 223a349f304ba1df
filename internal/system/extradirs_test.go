package system

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
)

// TestAdditionalDirectories: a trusted project's .claude/settings.json names ../shared: the
// file tools read and write it by absolute path, the deny rules hold there (a .env), a
// directory beside it stays outside; an untrusted project's additional directories are not
// opened, and one that does not exist is a warning.
func TestAdditionalDirectories(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, proj, shared := filepath.Join(base, "home"), filepath.Join(base, "proj"), filepath.Join(base, "shared")
	files := map[string]string{
		filepath.Join(home, SettingsFile):               `{"permissions": {"deny": ["write(**/.env)"]}}`,
		filepath.Join(proj, ".git", "HEAD"):             "ref: refs/heads/main\n",
		filepath.Join(proj, ".claude", "settings.json"): `{"permissions": {"additionalDirectories": ["../shared", "../missing"]}}`,
		filepath.Join(shared, "lib.txt"):                "shared v1\n",
		filepath.Join(base, "other", "x.txt"):           "other\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scenario := filepath.Join(base, "s.yaml")
	os.WriteFile(scenario, []byte(`version: 1
turns:
  - calls: [{name: edit, args: {path: `+shared+`/lib.txt, edits: [{oldText: v1, newText: v2}]}}]
  - calls: [{name: write, args: {path: `+shared+`/notes.md, content: "n\n"}}]
  - calls: [{name: write, args: {path: `+shared+`/.env, content: "T=1\n"}}]
  - calls: [{name: write, args: {path: `+base+`/other/x.txt, content: "changed\n"}}]
  - text: done
`), 0o600)
	run := func(trust TrustChoice) (*Runtime, string) {
		rt, err := Build(Options{Script: scenario, Dir: proj, Home: home, Getenv: env(nil), Trust: trust, Session: SessionChoice{Mode: SessionNone}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		out, err := rt.Run(context.Background(), llm.UserText("go"))
		if err != nil && out == nil {
			t.Fatal(err)
		}
		var refused []string
		for _, r := range out.Refused {
			refused = append(refused, r.Err.Error())
		}
		return rt, strings.Join(refused, "\n")
	}
	rt, _ := run(TrustOnce)
	if got, _ := os.ReadFile(filepath.Join(shared, "lib.txt")); string(got) != "shared v2\n" {
		t.Errorf("lib.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(shared, "notes.md")); err != nil {
		t.Errorf("notes.md not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(shared, ".env")); err == nil {
		t.Error("the deny rule did not hold in the additional directory")
	}
	if got, _ := os.ReadFile(filepath.Join(base, "other", "x.txt")); string(got) != "other\n" {
		t.Error("a directory beside the additional one was written")
	}
	if diags := strings.Join(rt.System.Diagnostics, "\n"); !strings.Contains(diags, "permissions.additionalDirectories: "+filepath.Join(base, "missing")) {
		t.Errorf("no warning for the missing directory:\n%s", diags)
	}
	// Untrusted: .claude/settings.json is not read; nothing outside the workspace is written.
	os.WriteFile(filepath.Join(shared, "lib.txt"), []byte("shared v1\n"), 0o600)
	os.Remove(filepath.Join(shared, "notes.md"))
	run(TrustNotOnce)
	if got, _ := os.ReadFile(filepath.Join(shared, "lib.txt")); string(got) != "shared v1\n" {
		t.Errorf("untrusted run edited lib.txt: %q", got)
	}
	if _, err := os.Stat(filepath.Join(shared, "notes.md")); err == nil {
		t.Error("untrusted run wrote notes.md")
	}
}

// TestAdditionalDirectoriesSandboxMasks: with --sandbox, the read deny rules hold for
// commands in an additional directory too (real bwrap): bash reads a denied .env there as
// empty, while the directory's other files stay readable and writable.
func TestAdditionalDirectoriesSandboxMasks(t *testing.T) {
	sandboxtest.New(t, sandbox.Config{Workspace: t.TempDir()}) // skips or fails without bwrap
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, proj, shared := filepath.Join(base, "home"), filepath.Join(base, "proj"), filepath.Join(base, "shared")
	files := map[string]string{
		filepath.Join(home, SettingsFile):               `{"permissions": {"deny": ["read(**/.env)"]}}`,
		filepath.Join(proj, ".git", "HEAD"):             "ref: refs/heads/main\n",
		filepath.Join(proj, ".claude", "settings.json"): `{"permissions": {"additionalDirectories": ["../shared"]}}`,
		filepath.Join(shared, "lib.txt"):                "shared\n",
		filepath.Join(shared, "conf", ".env"):           "CANARY=1\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scenario := filepath.Join(base, "s.yaml")
	os.WriteFile(scenario, []byte(`version: 1
turns:
  - calls: [{name: bash, args: {command: "{ cat `+shared+`/conf/.env; cat `+shared+`/lib.txt; echo more >> `+shared+`/lib.txt && echo wrote; } > got.txt 2>&1"}}]
  - text: done
`), 0o600)
	rt, err := Build(Options{Script: scenario, Dir: proj, Home: home, Getenv: env(nil), Trust: TrustOnce, Sandbox: true, Session: SessionChoice{Mode: SessionNone}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Run(context.Background(), llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(proj, "got.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "CANARY") || !strings.Contains(string(got), "shared\n") || !strings.Contains(string(got), "wrote") {
		t.Errorf("in the sandbox:\n%s", got)
	}
}
