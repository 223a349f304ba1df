package policy

import (
	"strings"
	"testing"
)

func TestMCPRules(t *testing.T) {
	p, err := New(Config{Rules: Rules{
		Deny:  []string{"mcp__fs__write_*", "mcp__shell"},
		Ask:   []string{"mcp__*"},
		Allow: []string{"mcp__fs__*", "mcp__git__status"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Verdict{
		"mcp__fs__write_file": Deny, // a glob after the server
		"mcp__fs__read_file":  Ask,  // mcp__* asks before allow is consulted
		"mcp__shell__run":     Deny, // the bare server name covers its tools
		"mcp__shellx__run":    Ask,  // ...but not another server that starts alike
		"mcp__Git__Status":    Ask,  // names are case-insensitive
		"contract_submit":     NoMatch,
		"mcp_search":          NoMatch,
	} {
		if d := p.Decide(name, []byte(`{}`)); d.Verdict != want {
			t.Errorf("%s: %v (%s), want %v", name, d.Verdict, d.Reason, want)
		}
	}
	p, err = New(Config{Rules: Rules{Allow: []string{"mcp__fs__*", "mcp__git"}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Verdict{"mcp__fs__read": Allow, "mcp__git__log": Allow, "mcp__gitx__log": NoMatch, "mcp__fsx__a": NoMatch} {
		if d := p.Decide(name, []byte(`{}`)); d.Verdict != want {
			t.Errorf("allow %s: %v, want %v", name, d.Verdict, want)
		}
	}
}

func TestMCPRulesRefused(t *testing.T) {
	for _, allow := range []string{"mcp__*", "mcp__g*__x"} {
		_, err := New(Config{Rules: Rules{Allow: []string{allow}}})
		if err == nil || !strings.Contains(err.Error(), "literal") {
			t.Errorf("allow %q: %v, want a refusal asking for a literal server", allow, err)
		}
	}
	for _, bad := range []string{"mcp__x__*(y)", "read*", "mcp__a b"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted it", bad)
		}
	}
}
