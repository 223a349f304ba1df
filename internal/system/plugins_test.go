package system

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
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

// TestNestedPlugins: in a skills directory, a plugin with skills and a hook-only plugin
// (no skills) both load their hooks; .claude beside .claude/skills, with a hooks/hooks.json
// the trust gate does not digest, is no plugin; neither is a plugin reached through a
// symbolic link, and a plugin's hooks file that resolves outside it is skipped.
func TestNestedPlugins(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	root, elsewhere := filepath.Join(base, "proj"), filepath.Join(base, "elsewhere")
	skills := filepath.Join(root, ".claude", "skills")
	kit, guard := filepath.Join(skills, "kits", "plugins", "kit"), filepath.Join(skills, "kits", "plugins", "guard")
	hooks := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}`
	for p, c := range map[string]string{
		filepath.Join(root, ".git", "HEAD"):                 "ref: refs/heads/main\n",
		filepath.Join(kit, pluginHooksFile):                 hooks,
		filepath.Join(kit, "skills", "review", "SKILL.md"):  "---\nname: review\ndescription: Review.\n---\n",
		filepath.Join(guard, pluginManifest):                `{"name": "guard", "hooks": "./more.json"}`,
		filepath.Join(guard, pluginHooksFile):               hooks,
		filepath.Join(root, ".claude", pluginHooksFile):     hooks,
		filepath.Join(elsewhere, "linked", pluginHooksFile): hooks,
		filepath.Join(elsewhere, "more.json"):               hooks,
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{filepath.Join(skills, "linked"): filepath.Join(elsewhere, "linked"), filepath.Join(guard, "more.json"): filepath.Join(elsewhere, "more.json")} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	src := contextpack.Load(contextpack.Inputs{Dir: root, ProjectTrusted: true})
	s, plugins, sources := withPlugins(Options{}, Settings{}, nil, &contextpack.Assembly{Skills: src.Skills, PluginDirs: src.PluginDirs})
	var got []string
	for _, p := range plugins {
		got = append(got, p.Name+" "+p.Dir)
	}
	if want := []string{"guard " + guard, "kit " + kit}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plugins:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(sources) != 2 || len(s.Hooks["Stop"]) != 2 {
		t.Errorf("sources %+v, hooks %+v", sources, s.Hooks)
	}
	if w := strings.Join(s.warnings, "\n"); !strings.Contains(w, filepath.Join(guard, "more.json")+": skipped: it resolves to "+filepath.Join(elsewhere, "more.json")+", outside the plugin") {
		t.Errorf("warnings:\n%s", w)
	}
	// Untrusted, the project's skills directories are not walked: no plugin.
	src = contextpack.Load(contextpack.Inputs{Dir: root})
	if len(src.PluginDirs) != 0 {
		t.Errorf("untrusted: %v", src.PluginDirs)
	}
}

// installedOf is what enabledInstalled finds for s.
func installedOf(o Options, s Settings, root string) []Plugin {
	_, p := enabledInstalled(o, s, root)
	return p
}
