package system

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
)

// TestPermissionModes: each permissions.defaultMode rein runs, over the same calls — a write
// an ask rule holds, a write a deny rule refuses, a bash command an ask rule holds, a read —
// with a user who declines every question. Deny rules hold in every mode.
func TestPermissionModes(t *testing.T) {
	scenario := `version: 1
turns:
  - calls: [{name: write, args: {path: notes.txt, content: "n\n"}}]
  - calls: [{name: write, args: {path: secret.txt, content: "s\n"}}]
  - calls: [{name: bash, args: {command: 'echo hi > bash.txt'}}]
  - calls: [{name: read, args: {path: seed.txt}}]
  - text: done
`
	for _, tc := range []struct {
		mode string
		// asked are the tools the user was asked about; ran the files the calls made.
		asked, ran []string
		codes      []refusal.Code
	}{
		{ModeDefault, []string{"write", "bash"}, nil, []refusal.Code{policy.CodeApprovalRequired, policy.CodeDenied, policy.CodeApprovalRequired}},
		{"manual", []string{"write", "bash"}, nil, []refusal.Code{policy.CodeApprovalRequired, policy.CodeDenied, policy.CodeApprovalRequired}},
		{ModeAcceptEdits, []string{"bash"}, []string{"notes.txt"}, []refusal.Code{policy.CodeDenied, policy.CodeApprovalRequired}},
		{ModeBypass, nil, []string{"bash.txt", "notes.txt"}, []refusal.Code{policy.CodeDenied}},
		{ModeDontAsk, nil, nil, []refusal.Code{policy.CodeApprovalRequired, policy.CodeDenied, policy.CodeApprovalRequired}},
		{ModePlan, nil, nil, []refusal.Code{CodePlanMode, policy.CodeDenied, CodePlanMode}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir, home := t.TempDir(), t.TempDir()
			settings := `{"permissions": {"defaultMode": "` + tc.mode + `", "ask": ["write(*)", "bash(echo *)"], "deny": ["write(secret.txt)"]}}`
			for p, s := range map[string]string{filepath.Join(home, SettingsFile): settings, filepath.Join(dir, "s.yaml"): scenario, filepath.Join(dir, "seed.txt"): "seed\n"} {
				if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var asked []string
			confirm := func(q string) (bool, error) {
				asked = append(asked, strings.Fields(strings.TrimPrefix(q, "rein: "))[0])
				return false, nil
			}
			rt, err := Build(Options{Script: filepath.Join(dir, "s.yaml"), Dir: dir, Home: home, Getenv: env(nil), Confirm: confirm, Session: SessionChoice{Mode: SessionNone}})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			if want := map[string]string{"manual": ModeDefault}[tc.mode]; rt.PermissionMode != tc.mode && rt.PermissionMode != want {
				t.Errorf("mode %q", rt.PermissionMode)
			}
			out, err := rt.Run(context.Background(), llm.UserText("go"))
			if err != nil && out == nil {
				t.Fatal(err)
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("asked about %q, want %q", asked, tc.asked)
			}
			var ran []string
			for _, f := range []string{"bash.txt", "notes.txt", "secret.txt"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					ran = append(ran, f)
				}
			}
			if !slices.Equal(ran, tc.ran) {
				t.Errorf("files %q, want %q", ran, tc.ran)
			}
			var codes []refusal.Code
			for _, r := range out.Refused {
				var re *refusal.Error
				if errors.As(r.Err, &re) {
					codes = append(codes, re.Code)
				}
			}
			if !slices.Equal(codes, tc.codes) {
				t.Errorf("refusals %q, want %q (%+v)", codes, tc.codes, out.Refused)
			}
		})
	}
}

// TestPermissionModeSources: rein's files win over Claude Code's; "auto" and a project's
// "bypassPermissions" are warnings and run as default; disableBypassPermissionsMode refuses
// bypass; a mode rein's own file misspells is an error naming file and line.
func TestPermissionModeSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(name, s, scope string) Settings {
		st, _, _ := readClaudeSettings(write(name, s), scope, dir)
		return st
	}
	user := read("user.json", `{"permissions": {"defaultMode": "bypassPermissions"}}`, ScopeClaudeUser)
	project := read("project.json", `{"permissions": {"defaultMode": "bypassPermissions"}}`, ScopeClaudeProject)
	if m, _, w := permissionMode(user); m != ModeBypass || len(w) != 0 {
		t.Errorf("user bypass: %s %q", m, w)
	}
	if m, _, w := permissionMode(user.merge(project)); m != ModeDefault || len(w) != 1 || !strings.Contains(w[0], "a project's settings cannot turn permission prompts off") {
		t.Errorf("project bypass: %s %q", m, w)
	}
	guard := read("guard.json", `{"permissions": {"disableBypassPermissionsMode": "disable"}}`, ScopeClaudeLocal)
	if m, _, w := permissionMode(user.merge(guard)); m != ModeDefault || len(w) != 1 || !strings.Contains(w[0], "disableBypassPermissionsMode") {
		t.Errorf("disabled bypass: %s %q", m, w)
	}
	auto := read("auto.json", `{"permissions": {"defaultMode": "auto"}}`, ScopeClaudeUser)
	if m, _, w := permissionMode(auto); m != ModeDefault || len(w) != 1 || !strings.Contains(w[0], `"auto": rein has no auto mode`) {
		t.Errorf("auto: %s %q", m, w)
	}
	bad := read("bad.json", `{"permissions": {"defaultMode": "yolo"}}`, ScopeClaudeUser)
	if bad.permMode != nil || !strings.Contains(strings.Join(bad.warnings, "\n"), `permissions.defaultMode: "yolo" is not a permission mode`) {
		t.Errorf("bad mode in a Claude Code file: %+v %q", bad.permMode, bad.warnings)
	}
	p := write("rein.json", "{\"permissions\": {\n  \"defaultMode\": \"plan\"}}")
	rein, err := ReadSettings(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if m, from, _ := permissionMode(Settings{}.merge(rein)); m != ModePlan || from != p {
		t.Errorf("rein's file: %s from %s", m, from)
	}
	p = write("typo.json", "{\"permissions\": {\n  \"defaultMode\": \"acceptEdit\"}}")
	if _, err := ReadSettings(p, true); err == nil || !strings.Contains(err.Error(), p+":2: permissions.defaultMode") {
		t.Errorf("typo: %v", err)
	}
}
