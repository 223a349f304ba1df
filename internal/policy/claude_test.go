package policy_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/policy"
)

func TestFromClaude(t *testing.T) {
	base := policy.ClaudeBase{Root: "/src/app"}
	for _, tc := range []struct {
		rule, list string
		want       []string
		reason     string
	}{
		{"Bash", "deny", []string{"bash"}, ""},
		{"Bash(npm run build)", "allow", []string{"bash(npm run build)"}, ""},
		{"Bash(git push:*)", "ask", []string{"bash(git push:*)"}, ""},
		{"Bash(git * main)", "deny", []string{"bash(git ** main)"}, ""},
		{"Bash(ls*)", "allow", []string{"bash(ls* **)"}, ""},
		{"Bash(npm run *)", "allow", []string{"bash(npm run *)"}, ""},
		{"Read", "allow", []string{"read", "grep", "find", "ls"}, ""},
		{"Edit", "ask", []string{"edit", "write"}, ""},
		{"Read(./.env)", "deny", []string{"read(./.env)"}, ""},
		{"Read(*.env)", "deny", []string{"read(**/*.env)"}, ""},
		{"Read(.env)", "deny", []string{"read(**/.env)"}, ""},
		{"Read(//etc/passwd)", "deny", []string{"read(/etc/passwd)"}, ""},
		{"Read(~/.zshrc)", "deny", []string{"read(~/.zshrc)"}, ""},
		{"Edit(/src/**)", "allow", []string{"edit(/src/app/src/**)"}, ""},
		{"Edit(src/**)", "allow", []string{"edit(src/**)"}, ""},
		{"Edit(src/**)", "deny", []string{"edit(**/src/**)"}, ""},
		{"MultiEdit(docs/**)", "allow", []string{"edit(docs/**)"}, ""},
		{"Glob(secret/**)", "allow", []string{"find(secret/**)"}, ""},
		{"WebFetch(domain:example.com)", "allow", nil, "rein has no WebFetch tool"},
		{"WebSearch", "deny", nil, "rein has no WebSearch tool"},
		{"Agent(Explore)", "deny", nil, "rein has no Agent tool"},
		{"mcp__memory__create", "allow", []string{"mcp__memory__create"}, ""},
		{"Bash(run_in_background:true", "deny", nil, "missing closing parenthesis"},
		{"Frobnicate(x)", "deny", nil, "not a rule rein knows"},
	} {
		got, reason := policy.FromClaude(tc.rule, tc.list, base)
		if !slices.Equal(got, tc.want) || (tc.reason == "") != (reason == "") || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s %s: %q %q, want %q %q", tc.list, tc.rule, got, reason, tc.want, tc.reason)
		}
		for _, r := range got {
			if _, err := policy.ParseRule(r); err != nil {
				t.Errorf("%s → %s: %v", tc.rule, r, err)
			}
		}
	}
}
