package pathrule

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/refusal"
)

func TestProtectedPathsMatcher(t *testing.T) {
	pp, err := NewProtectedPaths(append(append([]string{}, DefaultProtected...), StoreProtected...), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		".git":                      "**/.git",
		".GIT/config":               "**/.git",
		"/ws/sub/.git/hooks/x":      "**/.git",
		".rein/settings.json":       "**/.rein",
		".claude/settings.json":     "**/.claude",
		"sub/.claude/hooks/x.sh":    "**/.claude",
		".mcp.json":                 "**/.mcp.json",
		".agents/skills/s/SKILL.md": "**/.agents/skills",
		"a/.Rein/skills/s/SKILL.md": "**/.rein",
		"s/ledger.jsonl":            "**/ledger.jsonl",
		"s/LEDGER.LOCK":             "**/ledger.lock",
		"s/ledger.jsonl.torn-12":    "**/ledger.jsonl.torn-*",
		"s/blobs/sha256/aa/bb":      "**/blobs/sha256",
		".gitignore":                "",
		"src/main.go":               "",
		"/elsewhere/.git/config":    "",
	} {
		g, _ := pp.Match(p)
		if g != want {
			t.Errorf("Match(%q) = %q, want %q", p, g, want)
		}
	}
	err = pp.Check("x/.git/config", "shown/.git/config")
	if code, _ := refusal.CodeOf(err); code != CodeProtectedPath || !strings.Contains(err.Error(), "shown/.git/config is a protected path (**/.git, git's internals") {
		t.Errorf("Check = %v", err)
	}
	if pp.Check("src/a.go", "") != nil {
		t.Error("Check refused an ordinary path")
	}
	if _, err := NewProtectedPaths([]string{"["}, "/ws"); err == nil {
		t.Error("a bad glob was accepted")
	}
	none, err := NewProtectedPaths([]string{}, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := none.Match(".git/config"); ok {
		t.Error("an empty list protects something")
	}
}

func TestEscapeGlob(t *testing.T) {
	dir := "/tmp/odd[1]{a,b}*?"
	pp, err := NewProtectedPaths([]string{EscapeGlob(dir)}, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pp.Match(dir + "/auth.json"); !ok {
		t.Error("the escaped literal path does not match itself")
	}
	if _, ok := pp.Match("/tmp/odd1a"); ok {
		t.Error("the escaped path still acts as a glob")
	}
}
