package system

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClaudeSettingsSecondSource: ~/.claude/settings.json always and the project's
// .claude/settings*.json once trusted merge under rein's own settings; rules map, unknown keys
// and events warn, a file that does not parse is skipped with a warning, disableAllHooks turns
// off Claude Code's hooks only.
func TestClaudeSettingsSecondSource(t *testing.T) {
	dir := t.TempDir()
	home, root, user := filepath.Join(dir, "rein-home"), filepath.Join(dir, "proj"), filepath.Join(dir, "claude")
	for _, d := range []string{home, filepath.Join(root, ".claude"), filepath.Join(root, ".rein"), user} {
		os.MkdirAll(d, 0o755)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, SettingsFile), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "rein-stop"}]}]}}`)
	write(filepath.Join(root, ".rein", SettingsFile), `{"permissions": {"deny": ["bash(rm *)"]}}`)
	write(filepath.Join(user, "settings.json"), `{"permissions": {"allow": ["Bash(go test:*)"]}, "theme": "dark",
	  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "rein-stop"}, {"type": "command", "command": "user-stop"}]}]}}`)
	write(filepath.Join(root, ".claude", "settings.json"), `{"permissions": {"deny": ["Read(.env)", "WebSearch"]},
	  "hooks": {"SubagentStop": [{"hooks": [{"type": "command", "command": "x"}]}], "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard", "tyep": 1}]}]}}`)
	write(filepath.Join(root, ".claude", "settings.local.json"), `{"permissions": {`)
	o := Options{Home: home, Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return user
		}
		return ""
	}}
	global, err := ReadSettings(filepath.Join(home, SettingsFile), true)
	if err != nil {
		t.Fatal(err)
	}
	local, err := ReadSettings(filepath.Join(root, ".rein", SettingsFile), false)
	if err != nil {
		t.Fatal(err)
	}
	s, sources := withClaudeSettings(o, global.merge(local), root, true)
	if !slices.Equal(s.Permissions.Deny, []string{"bash(rm *)", "read(**/.env)"}) || !slices.Equal(s.Permissions.Allow, []string{"bash(go test:*)"}) {
		t.Errorf("permissions %+v", s.Permissions)
	}
	var names []string
	for _, g := range s.Hooks["Stop"] {
		for _, h := range g.Hooks {
			names = append(names, h.Name()+"="+h.Command)
		}
	}
	// The user's copy of rein's own Stop hook runs once.
	if !slices.Equal(names, []string{"global:Stop[0].hooks[0]=rein-stop", "claude-user:Stop[0].hooks[1]=user-stop"}) {
		t.Errorf("Stop hooks %q", names)
	}
	all := strings.Join(s.warnings, "\n")
	for _, want := range []string{
		filepath.Join(user, "settings.json") + ": ignoring what rein does not implement: theme",
		`permissions.deny[1]: "WebSearch" not applied: rein has no WebSearch tool`,
		"hooks.SubagentStop: accepted, never fired",
		`hooks.PreToolUse: ignoring the handler field "tyep"`,
		filepath.Join(root, ".claude", "settings.local.json") + ": skipped",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	var states []string
	for _, src := range sources {
		states = append(states, src.Scope+":"+src.State)
	}
	if !slices.Equal(states, []string{"global:loaded", "project:loaded", "claude-user:loaded", "claude-project:loaded", "claude-local:invalid"}) {
		t.Errorf("sources %q", states)
	}
	// Untrusted: the project's files are listed, not read.
	s, sources = withClaudeSettings(o, global, root, false)
	if slices.Contains(s.Permissions.Deny, "read(**/.env)") || sources[3].State != "untrusted" {
		t.Errorf("untrusted: %+v %+v", s.Permissions, sources)
	}
	// disableAllHooks in a Claude Code file turns off Claude Code's hooks, not rein's.
	write(filepath.Join(root, ".claude", "settings.local.json"), `{"disableAllHooks": true}`)
	s, _ = withClaudeSettings(o, global, root, true)
	if len(s.Hooks["Stop"]) != 1 || s.Hooks["Stop"][0].Hooks[0].Name() != "global:Stop[0].hooks[0]" || len(s.Hooks["PreToolUse"]) != 0 {
		t.Errorf("disableAllHooks: %+v", s.Hooks)
	}
}

// TestReinSettingsAcceptClaudeKeys: Claude Code keys in rein's own file warn; a typo is an
// error naming file:line; a Claude Code rule rein's syntax refuses is mapped.
func TestReinSettingsAcceptClaudeKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".rein", SettingsFile)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"statusLine": {"type": "command", "command": "x"},
 "permissions": {"allow": ["Read(src/**)", "Glob(secret/**)"], "additionalDirectories": ["../x"], "disableAutoMode": "disable"},
 "hooks": {"SubagentStop": [{"hooks": [{"type": "command", "command": "n"}]}]}}`), 0o644)
	s, err := ReadSettings(p, false)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(s.warnings, "\n")
	if !strings.Contains(all, "ignoring Claude Code settings rein does not implement: statusLine, permissions.disableAutoMode") || len(s.extraDirs) != 1 ||
		!strings.Contains(all, "hooks.SubagentStop: accepted, never fired") || !slices.Equal(s.Permissions.Allow, []string{"Read(src/**)", "find(secret/**)"}) {
		t.Errorf("warnings %q allow %q", all, s.Permissions.Allow)
	}
	os.WriteFile(p, []byte("{\n  \"hooks\": {\"Stop\": [{\"hooks\": [\n    {\"type\": \"command\", \"comand\": \"x\"}]}]}\n}"), 0o644)
	if _, err := ReadSettings(p, false); err == nil || !strings.Contains(err.Error(), p+":3: ") || !strings.Contains(err.Error(), `"comand"`) {
		t.Errorf("typo: %v", err)
	}
}

// TestClaudeEnvLenient: a Claude Code file's env keeps strings, numbers and booleans; a bad
// name or another value is a warning naming the key and never the value.
func TestClaudeEnvLenient(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(p, []byte(`{"env": {"A": "x", "TIMEOUT_MS": 600000, "ON": true, "BAD NAME": "s3cret-1", "OBJ": {"k": "s3cret-2"}}}`), 0o644)
	s, ok, invalid := readClaudeSettings(p, ScopeClaudeUser, filepath.Dir(p))
	if !ok || invalid {
		t.Fatalf("ok=%v invalid=%v", ok, invalid)
	}
	want := map[string]string{"A": "x", "TIMEOUT_MS": "600000", "ON": "true"}
	if len(s.Env) != len(want) || s.Env["A"] != "x" || s.Env["TIMEOUT_MS"] != "600000" || s.Env["ON"] != "true" {
		t.Errorf("env = %v, want %v", s.Env, want)
	}
	all := strings.Join(s.warnings, "\n")
	if !strings.Contains(all, `"BAD NAME" is not an environment variable name`) || !strings.Contains(all, "env.OBJ: ignored") {
		t.Errorf("warnings = %q, want the bad name and the object named", all)
	}
	if strings.Contains(all, "s3cret") {
		t.Errorf("a warning holds a value: %q", all)
	}
}
