package system

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstalledPlugins: installed_plugins.json (version 2) gives the install path — the
// project's installation over the user's —, plugin.json's "hooks" adds files and inline
// hooks, a path leaving the plugin or an installPath outside the plugins directory is
// refused with a warning, and an enabled plugin that is not installed is named.
func TestInstalledPlugins(t *testing.T) {
	dir := t.TempDir()
	cfg, root := filepath.Join(dir, "claude"), filepath.Join(dir, "proj")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	user := filepath.Join(cfg, "plugins", "cache", "mk", "lint", "1.0.0")
	proj := filepath.Join(cfg, "plugins", "cache", "mk", "lint", "2.0.0")
	outside := filepath.Join(dir, "elsewhere", "evil")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(cfg, "plugins", installedFile), `{"version": 2, "plugins": {
	  "lint@mk": [{"scope": "user", "installPath": "`+user+`", "version": "1.0.0"},
	              {"scope": "project", "projectPath": "`+root+`", "installPath": "`+proj+`", "version": "2.0.0"}],
	  "evil@mk": [{"scope": "user", "installPath": "`+outside+`"}]}}`)
	for _, d := range []string{user, proj} {
		write(filepath.Join(d, pluginHooksFile), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/stop.sh"}]}]}}`)
	}
	write(filepath.Join(proj, pluginManifest), `{"name": "lint", "hooks": ["./hooks/hooks.json", "./extra.json", "../../escape.json"]}`)
	write(filepath.Join(proj, "extra.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]}}`)
	write(filepath.Join(outside, pluginHooksFile), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "evil"}]}]}}`)
	o := Options{Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return cfg
		}
		return ""
	}}
	s := Settings{enabledPlugins: map[string]string{"lint@mk": "settings.json", "evil@mk": "settings.json", "gone@mk": "settings.json"}}
	s, installed := enabledInstalled(o, s, root)
	s, plugins, sources := withPlugins(o, s, installed, nil)
	if len(plugins) != 1 || plugins[0].Dir != proj || plugins[0].Name != "lint@mk" {
		t.Fatalf("plugins %+v", plugins)
	}
	if len(sources) != 2 || !strings.HasSuffix(sources[1].Path, "extra.json") {
		t.Errorf("sources %+v", sources)
	}
	h := s.Hooks["PreToolUse"][0].Hooks[0]
	if h.Name() != "plugin:lint@mk:PreToolUse[0].hooks[0]" || len(s.Hooks["Stop"]) != 1 {
		t.Errorf("hooks %+v", s.Hooks)
	}
	all := strings.Join(s.warnings, "\n")
	for _, want := range []string{`"../../escape.json" is not a path inside the plugin`, `plugin evil@mk: ` + outside + ` is not a directory inside`,
		`"gone@mk" is enabled but not installed`} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	// Disabled by a later file, or by disableAllHooks: nothing runs.
	s = Settings{enabledPlugins: map[string]string{"lint@mk": ""}}
	if s, plugins, _ = withPlugins(o, s, installedOf(o, s, root), nil); len(plugins) != 0 || len(s.Hooks) != 0 {
		t.Errorf("disabled plugin loaded: %+v", plugins)
	}
	s = Settings{enabledPlugins: map[string]string{"lint@mk": "x"}, disableClaudeHooks: true}
	if s, _, _ = withPlugins(o, s, installedOf(o, s, root), nil); len(s.Hooks) != 0 {
		t.Errorf("disableAllHooks: %+v", s.Hooks)
	}
}

// TestSkillPluginInsideSkillsDirectory: a plugin is found through its skills only inside a
// skills directory rein scans; .claude beside .claude/skills, with a hooks/hooks.json the
// trust gate does not digest, is no plugin.
func TestSkillPluginInsideSkillsDirectory(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	kit := filepath.Join(root, ".claude", "skills", "kits", "plugins", "kit")
	for _, p := range []string{filepath.Join(kit, pluginHooksFile), filepath.Join(root, ".claude", pluginHooksFile)} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(`{"hooks": {}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if p, ok := skillPlugin(filepath.Join(kit, "skills", "review"), ""); !ok || p != kit {
		t.Errorf("nested plugin: %q %v", p, ok)
	}
	if p, ok := skillPlugin(filepath.Join(root, ".claude", "skills", "deploy"), ""); ok {
		t.Errorf(".claude taken for a plugin: %q", p)
	}
}

// installedOf is what enabledInstalled finds for s.
func installedOf(o Options, s Settings, root string) []Plugin {
	_, p := enabledInstalled(o, s, root)
	return p
}
