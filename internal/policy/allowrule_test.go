package policy

import (
	"encoding/json"
	"testing"
)

// TestAllowRuleFor: the rule written for a held call parses, and with it as the only rule
// the same call is allowed while a different one is not.
func TestAllowRuleFor(t *testing.T) {
	for _, c := range []struct {
		tool, part, want string
		args, other      map[string]string
	}{
		{"bash", "go test ./...", "bash(go test ./...)", map[string]string{"command": "go test ./..."}, map[string]string{"command": "go test ./... -run X"}},
		{"bash", `git commit -m 'fix (the) *bug*'`, `bash(git commit -m fix\ \(the\)\ \*bug\*)`, map[string]string{"command": `git commit -m 'fix (the) *bug*'`}, map[string]string{"command": `git commit -m 'fix it'`}},
		{"bash", "echo $HOME", "bash(echo $HOME)", nil, nil},
		{"write", "docs/a[1].md", `write(docs/a\[1\].md)`, map[string]string{"path": "docs/a[1].md", "content": "x"}, map[string]string{"path": "docs/a1.md", "content": "x"}},
		{"Edit", "", "edit", nil, nil},
		{"mcp__gh__get_issue", "x", "mcp__gh__get_issue", nil, nil},
	} {
		got := AllowRuleFor(c.tool, c.part)
		if got != c.want {
			t.Errorf("AllowRuleFor(%q, %q) = %q, want %q", c.tool, c.part, got, c.want)
			continue
		}
		if _, err := ParseRule(got); err != nil {
			t.Errorf("%q does not parse: %v", got, err)
		}
		if c.args == nil {
			continue
		}
		p, err := New(Config{Rules: Rules{Allow: []string{got}}, Dir: "/ws"})
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(c.args)
		if d := p.Decide(c.tool, args); d.Verdict != Allow {
			t.Errorf("%q does not allow %s: %+v", got, args, d)
		}
		other, _ := json.Marshal(c.other)
		if d := p.Decide(c.tool, other); d.Verdict == Allow {
			t.Errorf("%q allows %s too", got, other)
		}
	}
}
